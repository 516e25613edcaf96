export * from './problem';
export { sendDomainError } from './problem-reply';
export * from './problem-types';

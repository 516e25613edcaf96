export { DATABASE_UNAVAILABLE, databaseFault } from './database-faults';
export * from './problem';
export { sendDomainError } from './problem-reply';
export * from './problem-types';

export * from './problem';
export * from './problem-types';

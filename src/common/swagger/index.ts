export * from './api-formats';
export * from './api-problems.decorator';

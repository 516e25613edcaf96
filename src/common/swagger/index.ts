export * from './api-body';
export * from './api-formats';
export * from './api-problems.decorator';

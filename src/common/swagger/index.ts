export * from './api-problems.decorator';

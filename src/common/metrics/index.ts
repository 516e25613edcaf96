export * from './security-counters';

export * from './shutdown-state';

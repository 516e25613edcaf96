export * from './cli-command';

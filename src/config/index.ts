export * from './app-config';
export * from './config.module';
export * from './int-setting';
export * from './settings';

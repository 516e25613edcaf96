export * from './api-key-format';
export * from './auth-policy';
export * from './authenticate-with';
export * from './security-schemes';

export { closedMidRequest } from './client-error';
export * from './compression';
export * from './conditional-request';
export * from './etag';
export * from './ip-address';
export { AcceptsMergePatch } from './json-body';
export * from './location';
export * from './multipart';
export * from './route-config';

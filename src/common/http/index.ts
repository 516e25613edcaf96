export * from './compression';
export * from './etag';
export * from './location';
export * from './multipart';
export * from './route-config';

export * from './api-rate-limit.decorator';
export * from './client-throttler.guard';
export * from './rate-limit.module';
export * from './rate-limit-headers';
export * from './rate-limit-store';
export * from './too-many-requests.error';

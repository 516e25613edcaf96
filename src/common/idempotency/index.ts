export * from './idempotency.errors';
export { REPLAYED_HEADER } from './idempotency.interceptor';
export { IdempotencyModule } from './idempotency.module';
export { Idempotent } from './idempotent.decorator';
export { claimIdempotentUpload } from './idempotent-attempt';

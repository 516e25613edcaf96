import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';

import { IdempotencyModule } from '../common/idempotency';
import { ConfigModule } from '../config';
import { ApiKeyStrategy } from './api-key.strategy';
import { CurrentKeyController } from './current-key.controller';
import { InitialRegion } from './initial-region';
import { KeyExpiryMetric } from './key-expiry-metric';
import { KeyRateLimiter } from './key-rate-limiter';
import { KeyUsageController } from './key-usage/key-usage.controller';
import { KeyUsageModule } from './key-usage/key-usage.module';
import { LeakReportGuard } from './leak-report.guard';
import { LeakedKeysController } from './leaked-keys.controller';
import { LeakedKeysService } from './leaked-keys.service';
import { RegionEventsController } from './region-events.controller';
import { RegionEventsRepository } from './region-events.repository';
import { UnusableKeyRefusal } from './region-key-auth.decorator';
import { RegionKeysController } from './region-keys.controller';
import { RegionKeysRepository } from './region-keys.repository';
import { RegionKeysService } from './region-keys.service';
import { RegionKeysSettings } from './region-keys.settings';

/**
 * Region API keys. Other features protect routes with @RegionKeyAuth(permission), and read
 * the caller with @CurrentRegion(), without importing this module; the app imports it once.
 * One static module wherever it is imported: InitialRegion does its work only in the server
 * (see there).
 */
@Module({
  imports: [ConfigModule.forFeature(RegionKeysSettings), PassportModule, KeyUsageModule, IdempotencyModule],
  controllers: [
    RegionKeysController,
    CurrentKeyController,
    KeyUsageController,
    RegionEventsController,
    LeakedKeysController,
  ],
  providers: [
    RegionKeysRepository,
    RegionEventsRepository,
    RegionKeysService,
    ApiKeyStrategy,
    UnusableKeyRefusal,
    InitialRegion,
    KeyExpiryMetric,
    KeyRateLimiter,
    LeakedKeysService,
    LeakReportGuard,
  ],
  // UnusableKeyRefusal: its preHandler is on the HTTP edge, which createApp builds.
  exports: [RegionKeysService, UnusableKeyRefusal],
})
export class RegionKeysModule {}

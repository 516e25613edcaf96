import { DynamicModule, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';

import { ConfigModule } from '../config';
import { ApiKeyStrategy } from './api-key.strategy';
import { InitialRegion } from './initial-region';
import { KeyUsageModule } from './key-usage/key-usage.module';
import { RegionEventsRepository } from './region-events.repository';
import { UnusableKeyRefusal } from './region-key-auth.decorator';
import { RegionKeysController } from './region-keys.controller';
import { RegionKeysRepository } from './region-keys.repository';
import { RegionKeysService } from './region-keys.service';
import { RegionKeysSettings } from './region-keys.settings';

@Module({
  imports: [ConfigModule.forFeature(RegionKeysSettings), PassportModule, KeyUsageModule],
  controllers: [RegionKeysController],
  providers: [RegionKeysRepository, RegionEventsRepository, RegionKeysService, ApiKeyStrategy, UnusableKeyRefusal],
  exports: [RegionKeysService],
})
export class RegionKeysModule {
  /**
   * The server's: at start it also makes the first region when there is none (InitialRegion).
   * The operator CLI imports the plain module: `region create` on an empty database must
   * make only the region it names.
   */
  static forServer(): DynamicModule {
    return { module: RegionKeysModule, providers: [InitialRegion] };
  }
}

import { Module } from '@nestjs/common';

import { ConfigModule } from '../../config';
import { RegionKeysSettings } from '../region-keys.settings';
import { KeyUsageRepository } from './key-usage.repository';
import { KeyUsageService } from './key-usage.service';
import { KeyUsageCounter } from './key-usage-counter';

/** Per-key usage: counted where a key authenticates, read by the region keys controller. */
@Module({
  imports: [ConfigModule.forFeature(RegionKeysSettings)],
  providers: [KeyUsageRepository, KeyUsageCounter, KeyUsageService],
  exports: [KeyUsageCounter, KeyUsageService],
})
export class KeyUsageModule {}

import { Module } from '@nestjs/common';
import { KeyUsageCounter } from './key-usage-counter';
import { KeyUsageRepository } from './key-usage.repository';
import { KeyUsageService } from './key-usage.service';

/** Per-key usage: counted where a key authenticates, read by the region keys controller. */
@Module({
  providers: [KeyUsageRepository, KeyUsageCounter, KeyUsageService],
  exports: [KeyUsageCounter, KeyUsageService],
})
export class KeyUsageModule {}

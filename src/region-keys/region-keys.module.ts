import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { ApiKeyStrategy } from './api-key.strategy';
import { InitialRegion } from './initial-region';
import { RegionKeysController } from './region-keys.controller';
import { RegionKeysRepository } from './region-keys.repository';
import { RegionKeysService } from './region-keys.service';

@Module({
  imports: [PassportModule],
  controllers: [RegionKeysController],
  providers: [RegionKeysRepository, RegionKeysService, ApiKeyStrategy, InitialRegion],
  exports: [RegionKeysService],
})
export class RegionKeysModule {}

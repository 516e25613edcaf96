import { Module } from '@nestjs/common';

import { CelestialBodiesModule } from '../celestial-bodies';
import { ConfigModule } from '../config';
import { RegionKeysModule, RegionKeysSettings } from '../region-keys';
import { SandboxRepository } from './sandbox.repository';
import { SandboxService } from './sandbox.service';

/**
 * Operator tasks of a sandbox deployment (`cli sandbox reset`); the server does not load it.
 * It exports nothing: the command reads SandboxService from its own application context.
 */
@Module({
  imports: [ConfigModule.forFeature(RegionKeysSettings), RegionKeysModule, CelestialBodiesModule],
  providers: [SandboxRepository, SandboxService],
})
export class SandboxModule {}

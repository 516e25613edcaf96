import { Module } from '@nestjs/common';
import { CelestialBodiesModule } from '../celestial-bodies/celestial-bodies.module';
import { RegionKeysModule } from '../region-keys/region-keys.module';
import { SandboxRepository } from './sandbox.repository';
import { SandboxService } from './sandbox.service';

/** Operator tasks of a sandbox deployment (`cli sandbox reset`); the server does not load it. */
@Module({
  imports: [RegionKeysModule, CelestialBodiesModule],
  providers: [SandboxRepository, SandboxService],
  exports: [SandboxService],
})
export class SandboxModule {}

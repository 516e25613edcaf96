import { DynamicModule, Module } from '@nestjs/common';

import { ConfigModule } from '../config';
import { UsersModule } from '../users';
import { CelestialBodiesController } from './celestial-bodies.controller';
import { CelestialBodiesRepository } from './celestial-bodies.repository';
import { CelestialBodiesService } from './celestial-bodies.service';
import { CelestialBodiesSettings } from './celestial-bodies.settings';
import { PlanetsController } from './planets.controller';
import { SampleData, SampleSeeder } from './sample-data';
import { UploadSlots } from './upload-slots';

/** Planets and satellites of the Galaxy (tags "Planets" and "Celestial Bodies"). */
@Module({
  imports: [ConfigModule.forFeature(CelestialBodiesSettings), UsersModule],
  controllers: [PlanetsController, CelestialBodiesController],
  providers: [CelestialBodiesRepository, CelestialBodiesService, SampleSeeder, UploadSlots],
  exports: [SampleSeeder],
})
export class CelestialBodiesModule {
  /**
   * The server's: at start it also adds the sample planets when asked (SampleData). The
   * operator CLI imports the plain module, whose commands must change only what they say.
   */
  static forServer(): DynamicModule {
    return { module: CelestialBodiesModule, providers: [SampleData] };
  }
}

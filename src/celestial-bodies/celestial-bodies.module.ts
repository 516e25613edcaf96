import { Module } from '@nestjs/common';

import { IdempotencyModule } from '../common/idempotency';
import { ConfigModule } from '../config';
import { UsersModule } from '../users';
import { CelestialBodiesController } from './celestial-bodies.controller';
import { CelestialBodiesRepository } from './celestial-bodies.repository';
import { CelestialBodiesService } from './celestial-bodies.service';
import { CelestialBodiesSettings } from './celestial-bodies.settings';
import { PlanetImagesController } from './planet-images.controller';
import { PlanetsController } from './planets.controller';
import { PlanetsLookup } from './planets-lookup';
import { SampleData, SampleSeeder } from './sample-data';
import { UploadSlots } from './upload-slots';

/**
 * Planets and satellites of the Galaxy (tags "Planets" and "Celestial Bodies"). One static
 * module wherever it is imported: SampleData does its work only in the server (see there).
 * Other features reach planets through PlanetsLookup.
 */
@Module({
  imports: [ConfigModule.forFeature(CelestialBodiesSettings), UsersModule, IdempotencyModule],
  controllers: [PlanetsController, PlanetImagesController, CelestialBodiesController],
  providers: [CelestialBodiesRepository, CelestialBodiesService, PlanetsLookup, SampleSeeder, SampleData, UploadSlots],
  exports: [PlanetsLookup, SampleSeeder],
})
export class CelestialBodiesModule {}

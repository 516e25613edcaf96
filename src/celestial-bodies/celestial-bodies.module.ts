import { Module } from '@nestjs/common';
import { CelestialBodiesController } from './celestial-bodies.controller';
import { CelestialBodiesRepository } from './celestial-bodies.repository';
import { CelestialBodiesService } from './celestial-bodies.service';
import { MultipartOnlyWhereAccepted } from './multipart-routes';
import { PlanetsController } from './planets.controller';
import { SampleData } from './sample-data';
import { UploadSlots } from './upload-slots';

/** Planets and satellites of the Galaxy (tags "Planets" and "Celestial Bodies"). */
@Module({
  controllers: [PlanetsController, CelestialBodiesController],
  providers: [CelestialBodiesRepository, CelestialBodiesService, MultipartOnlyWhereAccepted, SampleData, UploadSlots],
})
export class CelestialBodiesModule {}

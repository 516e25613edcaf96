import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { CelestialBodiesController } from './celestial-bodies.controller';
import { CelestialBodiesRepository } from './celestial-bodies.repository';
import { CelestialBodiesService } from './celestial-bodies.service';
import { PlanetsController } from './planets.controller';
import { SampleData } from './sample-data';
import { UploadSlots } from './upload-slots';

/** Planets and satellites of the Galaxy (tags "Planets" and "Celestial Bodies"). */
@Module({
  imports: [UsersModule],
  controllers: [PlanetsController, CelestialBodiesController],
  providers: [CelestialBodiesRepository, CelestialBodiesService, SampleData, UploadSlots],
})
export class CelestialBodiesModule {}

import { Body, Controller, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { CurrentUser, UserAuth } from '../auth/user-auth.decorator';
import { NOT_FOUND, UNAVAILABLE } from '../common/problem/problem-types';
import { ApiProblems, jsonBodyProblems } from '../common/swagger/api-problems.decorator';
import { PLANET_TYPES, SATELLITE_TYPES } from './celestial-body-types';
import { CelestialBodiesService } from './celestial-bodies.service';
import { CelestialBodyPipe, type CelestialBodyInput } from './celestial-body.pipe';
import { PlanetBodyInputDto } from './dto/planet-input.dto';
import { PlanetDto } from './dto/planet.dto';
import { SatelliteInputDto } from './dto/satellite-input.dto';
import { SatelliteDto } from './dto/satellite.dto';

/** The Galaxy's `CelestialBody`: a oneOf of a planet and a satellite, told apart by `type`. */
function celestialBody(planet: Function, satellite: Function) {
  const mapping = Object.fromEntries([
    ...PLANET_TYPES.map((type) => [type, getSchemaPath(planet)]),
    ...SATELLITE_TYPES.map((type) => [type, getSchemaPath(satellite)]),
  ]);
  return {
    oneOf: [{ $ref: getSchemaPath(planet) }, { $ref: getSchemaPath(satellite) }],
    discriminator: { propertyName: 'type', mapping },
  };
}

@ApiTags('Celestial Bodies')
@Controller('celestial-bodies')
export class CelestialBodiesController {
  constructor(private readonly celestialBodies: CelestialBodiesService) {}

  @Post()
  @UserAuth()
  @ApiOperation({
    operationId: 'createCelestialBody',
    summary: 'Create a celestial body',
    description:
      'A planet when `type` is terrestrial, gas_giant, ice_giant, dwarf or super_earth (you become its creator); ' +
      'a satellite when it is moon, asteroid or comet, orbiting the existing planet named by `orbit.planet.id`.',
  })
  @ApiExtraModels(PlanetBodyInputDto, SatelliteInputDto, PlanetDto, SatelliteDto)
  @ApiBody({ required: true, description: 'Celestial body to create', schema: celestialBody(PlanetBodyInputDto, SatelliteInputDto) })
  @ApiCreatedResponse({ description: 'Celestial body created', schema: celestialBody(PlanetDto, SatelliteDto) })
  @ApiProblems(
    ...jsonBodyProblems('Invalid input: a missing or unknown type, unknown fields, wrong types or values.'),
    { types: [NOT_FOUND], description: 'The planet named by orbit.planet.id does not exist.', detail: 'orbit.planet.id: no planet with id 42 exists.' },
    UNAVAILABLE,
  )
  async createCelestialBody(
    @CurrentUser() user: AuthenticatedUser,
    @Body(CelestialBodyPipe) body: CelestialBodyInput,
  ): Promise<PlanetDto | SatelliteDto> {
    if (body instanceof SatelliteInputDto) {
      const { satellite, planet } = await this.celestialBodies.createSatellite(body);
      return SatelliteDto.from(satellite, planet);
    }
    return PlanetDto.from(await this.celestialBodies.createPlanet(user.id, body));
  }
}

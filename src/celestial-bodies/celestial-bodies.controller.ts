import { Body, Controller, Post, Res, type Type } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
import { absoluteUrl, locationHeader } from '../common/http';
import { Idempotent } from '../common/idempotency';
import { FORBIDDEN, NOT_FOUND, UNAVAILABLE } from '../common/problem';
import { ApiProblems, jsonBodyProblems } from '../common/swagger';
import { invalidBody } from '../common/validation';
import { AppConfig } from '../config';
import {
  NotPlanetCreatorError,
  OrbitedPlanetNotFoundError,
  SATELLITE_LIMIT,
  SatelliteLimitError,
} from './celestial-bodies.errors';
import { CelestialBodiesService } from './celestial-bodies.service';
import { type CelestialBodyInput, CelestialBodyPipe } from './celestial-body.pipe';
import { MAX_SATELLITES_PER_PLANET, PLANET_TYPES, SATELLITE_TYPES } from './celestial-body-types';
import { PlanetBodyDto, PlanetDto, planetPath } from './dto/planet.dto';
import { PlanetBodyInputDto } from './dto/planet-input.dto';
import { SatelliteDto } from './dto/satellite.dto';
import { SatelliteInputDto } from './dto/satellite-input.dto';

/** The Galaxy's `CelestialBody`: a oneOf of a planet and a satellite, told apart by `type`. */
function celestialBody(planet: Type<unknown>, satellite: Type<unknown>) {
  const mapping = Object.fromEntries<string>([
    ...PLANET_TYPES.map((type): [string, string] => [type, getSchemaPath(planet)]),
    ...SATELLITE_TYPES.map((type): [string, string] => [type, getSchemaPath(satellite)]),
  ]);
  return {
    oneOf: [{ $ref: getSchemaPath(planet) }, { $ref: getSchemaPath(satellite) }],
    discriminator: { propertyName: 'type', mapping },
  };
}

@ApiTags('Celestial Bodies')
@Controller('celestial-bodies')
export class CelestialBodiesController {
  constructor(
    private readonly celestialBodies: CelestialBodiesService,
    private readonly config: AppConfig,
  ) {}

  @Post()
  @UserAuth()
  @Idempotent({ scope: 'caller' })
  @ApiOperation({
    operationId: 'createCelestialBody',
    summary: 'Create a celestial body',
    description:
      'A planet when `type` is terrestrial, gas_giant, ice_giant, dwarf or super_earth (you become its creator); ' +
      'a satellite when it is moon, asteroid or comet, orbiting the existing planet named by `orbit.planet.id`, which ' +
      `you created and which has fewer than ${MAX_SATELLITES_PER_PLANET} satellites. ` +
      "Location is the new planet's URI; for a satellite, which has no URI of its own, that of the planet it orbits " +
      '(whose `satellites` list it). Bodies as the Galaxy types them are accepted: the fields the server sets (id, ' +
      'lastUpdated, creator, satellites, image) are ignored, `orbit.planet` may be a whole Planet (only its id is ' +
      'read), and further numeric physicalProperties are kept. Refused by design: a satellite without ' +
      '`orbit.planet` (a satellite here must orbit a planet; the Galaxy makes orbit optional), and the callback URLs ' +
      '(a server-side request forgery risk).',
  })
  @ApiExtraModels(PlanetBodyInputDto, SatelliteInputDto, PlanetBodyDto, SatelliteDto)
  @ApiBody({
    required: true,
    description: 'Celestial body to create',
    schema: celestialBody(PlanetBodyInputDto, SatelliteInputDto),
  })
  @ApiCreatedResponse({
    description: 'Celestial body created',
    schema: celestialBody(PlanetBodyDto, SatelliteDto),
    headers: locationHeader('The URI of the new planet, or for a satellite of the planet it orbits.', '/planets/1'),
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: a missing or unknown type, a satellite without orbit.planet, unknown fields, wrong types or ' +
        'values, or a callback URL.',
      invalidBody(PlanetBodyInputDto, { type: 'terrestrial', name: '' }),
    ),
    {
      types: [FORBIDDEN],
      description: 'A satellite for a planet another user created: only its creator may add one.',
      examples: [() => new NotPlanetCreatorError()],
    },
    {
      types: [NOT_FOUND],
      description: 'The planet named by orbit.planet.id does not exist.',
      examples: [() => new OrbitedPlanetNotFoundError(42)],
    },
    {
      types: [SATELLITE_LIMIT],
      description: `The planet already has ${MAX_SATELLITES_PER_PLANET} satellites, the most a planet may have.`,
      examples: [() => new SatelliteLimitError(14, MAX_SATELLITES_PER_PLANET)],
    },
    UNAVAILABLE,
  )
  async createCelestialBody(
    @CurrentUser() user: AuthenticatedUser,
    @Body(CelestialBodyPipe) body: CelestialBodyInput,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PlanetDto | SatelliteDto> {
    const locate = (planetId: number) =>
      reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, planetPath(planetId)));
    if (body instanceof SatelliteInputDto) {
      const { satellite, planet } = await this.celestialBodies.createSatellite(user.id, body);
      locate(planet.id);
      return SatelliteDto.from(satellite, planet);
    }
    const created = await this.celestialBodies.createPlanet(user.id, body);
    locate(created.planet.id);
    return PlanetDto.from(created);
  }
}

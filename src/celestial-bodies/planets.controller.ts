import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
import { Public } from '../common/auth';
import {
  absoluteUrl,
  type ChangeConditions,
  ConditionalChange,
  ConditionalGet,
  Conditions,
  locationHeader,
  sendTagged,
} from '../common/http';
import { Idempotent } from '../common/idempotency';
import { offsetPage, PAGINATION_HEADERS } from '../common/paging';
import { FORBIDDEN, UNAVAILABLE, VALIDATION } from '../common/problem';
import { ApiProblems, jsonBodyProblems, unexpectedBodyProblems } from '../common/swagger';
import { invalidBody, invalidQuery } from '../common/validation';
import { AppConfig } from '../config';
import { CelestialBodiesService } from './celestial-bodies.service';
import { PlanetDto, planetPath } from './dto/planet.dto';
import { PlanetInputDto } from './dto/planet-input.dto';
import { PlanetPageDto } from './dto/planet-page.dto';
import { PlanetPageQueryDto } from './dto/planet-page-query.dto';
import { PLANET_TAGS, planetEtag } from './planet-etag';
import { ApiPlanetId, INVALID_PLANET_ID, PlanetId } from './planet-id.param';

/** The 403 of a change to a planet by another than its creator. */
export const NOT_CREATOR = { types: [FORBIDDEN], description: 'The planet was created by another user.' };
/** A planet body a create or update refuses: an empty name. */
const INVALID_PLANET = invalidBody(PlanetInputDto, { name: '' });

@ApiTags('Planets')
@Controller('planets')
@ApiProblems(UNAVAILABLE)
export class PlanetsController {
  constructor(
    private readonly celestialBodies: CelestialBodiesService,
    private readonly config: AppConfig,
  ) {}

  /**
   * Get all planets
   * @remarks A page of planets, by id, each with its satellites. A limit above 100 is served as 100, not refused (the
   * Galaxy's limit has no maximum): meta.limit and X-Pagination-Per-Page give the limit served.
   */
  @Get()
  @Public()
  @ApiOkResponse({ type: PlanetPageDto, headers: PAGINATION_HEADERS, description: 'A page of planets' })
  @ApiProblems({
    types: [VALIDATION],
    description: 'limit is not a positive integer, or offset not an integer from 0.',
    examples: [invalidQuery(PlanetPageQueryDto, { limit: '0' })],
  })
  async getAllData(@Query() query: PlanetPageQueryDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const { items, total } = await this.celestialBodies.listPlanets(query.limit, query.offset);
    const page = offsetPage(absoluteUrl(reply.request, this.config.ownBaseUrl, '/planets'), query, total);
    reply.headers(page.headers);
    return { data: items.map((item) => PlanetDto.from(item)), meta: page.meta } satisfies PlanetPageDto;
  }

  /**
   * Create a planet
   * @remarks You become its creator: only you can change or delete it. A Planet as the Galaxy types it is accepted: the
   * fields the server sets (id, lastUpdated, creator, satellites, image) are ignored, and further numeric
   * physicalProperties are kept. Refused by design: successCallbackUrl and failureCallbackUrl (this server calls no URL
   * a client gives it: a server-side request forgery risk), and XML bodies (415).
   */
  @Post()
  @UserAuth()
  @Idempotent({ scope: 'caller' })
  @ApiCreatedResponse({
    type: PlanetDto,
    description: 'Created',
    headers: locationHeader('The URI of the new planet.', '/planets/1'),
  })
  @ApiProblems(
    ...jsonBodyProblems('Invalid input: unknown fields, wrong types or values, or a callback URL.', INVALID_PLANET),
  )
  async createPlanet(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: PlanetInputDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const created = await this.celestialBodies.createPlanet(user.id, body);
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, planetPath(created.planet.id)));
    return PlanetDto.from(created);
  }

  /**
   * Get a planet
   * @remarks The planet with its satellites, and its ETag; send If-None-Match to get a 304 when it has not changed,
   * If-Match with a change to make it only then.
   */
  @Get(':planetId')
  @Public()
  @ApiPlanetId()
  @ConditionalGet(PLANET_TAGS)
  @ApiOkResponse({ type: PlanetDto, description: 'Planet found' })
  async getPlanet(@PlanetId() planetId: number, @Res() reply: FastifyReply): Promise<void> {
    const planet = PlanetDto.from(await this.celestialBodies.getPlanet(planetId));
    await sendTagged(reply, planetEtag(planet), planet);
  }

  /**
   * Update a planet
   * @remarks Replaces the planet's fields (what the body leaves out is cleared). Only its creator may. As for
   * createPlanet, the fields the server sets are ignored and the callback URLs refused; an id, when sent, must be the
   * planetId of the path (else 400).
   */
  @Put(':planetId')
  @UserAuth()
  @ApiPlanetId()
  @ConditionalChange(PLANET_TAGS)
  @ApiOkResponse({ type: PlanetDto, description: 'Planet updated successfully' })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: unknown fields, wrong types or values, a callback URL, or an id other than planetId.',
      INVALID_PLANET,
    ),
    NOT_CREATOR,
  )
  async updatePlanet(
    @PlanetId() planetId: number,
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: PlanetInputDto,
    @Conditions() conditions: ChangeConditions,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PlanetDto> {
    const planet = PlanetDto.from(await this.celestialBodies.updatePlanet(planetId, user.id, body, conditions));
    reply.header('ETag', planetEtag(planet));
    return planet;
  }

  /**
   * Delete a planet
   * @remarks Deletes the planet with its satellites and image. Only its creator may.
   */
  @Delete(':planetId')
  @HttpCode(204)
  @UserAuth()
  @ApiPlanetId()
  @ConditionalChange(PLANET_TAGS)
  @ApiNoContentResponse({ description: 'Deleted, with its satellites.' })
  @ApiProblems(...unexpectedBodyProblems(INVALID_PLANET_ID), NOT_CREATOR)
  async deletePlanet(
    @PlanetId() planetId: number,
    @CurrentUser() user: AuthenticatedUser,
    @Conditions() conditions: ChangeConditions,
  ) {
    await this.celestialBodies.deletePlanet(planetId, user.id, conditions);
  }
}

import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
import { Public } from '../common/auth';
import {
  absoluteUrl,
  AcceptsMultipart,
  type ChangeConditions,
  ConditionalChange,
  ConditionalGet,
  Conditions,
  etagOfHash,
  locationHeader,
  notModified,
  sendTagged,
} from '../common/http';
import { claimIdempotentUpload, Idempotent } from '../common/idempotency';
import { offsetPage, PAGINATION_HEADERS } from '../common/paging';
import {
  FORBIDDEN,
  NOT_FOUND,
  REQUEST_TIMEOUT,
  UNAVAILABLE,
  UNSUPPORTED_MEDIA_TYPE,
  UnsupportedMediaTypeError,
  VALIDATION,
} from '../common/problem';
import { ApiTooManyRequests } from '../common/rate-limit';
import { ApiProblems, jsonBodyProblems, unexpectedBodyProblems } from '../common/swagger';
import { invalidBody, invalidQuery } from '../common/validation';
import { AppConfig } from '../config';
import {
  IMAGE_TOO_LARGE,
  MissingImageError,
  PlanetImageNotFoundError,
  PlanetNotFoundError,
  TooManyUploadsError,
} from './celestial-bodies.errors';
import { CelestialBodiesService } from './celestial-bodies.service';
import { CelestialBodiesSettings } from './celestial-bodies.settings';
import { ImageUploadedDto } from './dto/image-uploaded.dto';
import { PlanetDto, planetImagePath, planetPath } from './dto/planet.dto';
import { PlanetInputDto } from './dto/planet-input.dto';
import { PlanetPageDto } from './dto/planet-page.dto';
import { PlanetPageQueryDto } from './dto/planet-page-query.dto';
import { IMAGE_FORM_DETAIL, readImageForm } from './image-form';
import { IMAGE_TYPES, MAX_IMAGE_BYTES } from './image-upload';
import { PLANET_TAGS, planetEtag } from './planet-etag';
import { INVALID_PLANET_ID, PLANET_ID_PARAM, PlanetId } from './planet-id.param';

const PLANET_NOT_FOUND = {
  types: [NOT_FOUND],
  description: 'No planet with this id.',
  examples: [() => new PlanetNotFoundError(42)],
};
const BAD_PLANET_ID = {
  types: [VALIDATION],
  description: 'planetId is not a positive integer.',
  examples: [INVALID_PLANET_ID],
};
const NOT_CREATOR = { types: [FORBIDDEN], description: 'The planet was created by another user.' };
/** A planet body a create or update refuses: an empty name. */
const INVALID_PLANET = invalidBody(PlanetInputDto, { name: '' });
const IMAGE_ETAG = {
  ETag: { description: 'Entity tag of the image (its SHA-256)', schema: { type: 'string', example: '"33a64df551"' } },
};

@ApiTags('Planets')
@Controller('planets')
export class PlanetsController {
  constructor(
    private readonly celestialBodies: CelestialBodiesService,
    private readonly config: AppConfig,
    private readonly settings: CelestialBodiesSettings,
  ) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: 'Get all planets',
    description:
      'A page of planets, by id, each with its satellites. A limit above 100 is served as 100, not refused (the ' +
      "Galaxy's limit has no maximum): meta.limit and X-Pagination-Per-Page give the limit served.",
  })
  @ApiOkResponse({ type: PlanetPageDto, headers: PAGINATION_HEADERS, description: 'A page of planets' })
  @ApiProblems(
    {
      types: [VALIDATION],
      description: 'limit is not a positive integer, or offset not an integer from 0.',
      examples: [invalidQuery(PlanetPageQueryDto, { limit: '0' })],
    },
    UNAVAILABLE,
  )
  async getAllData(@Query() query: PlanetPageQueryDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const { items, total } = await this.celestialBodies.listPlanets(query.limit, query.offset);
    const page = offsetPage('/planets', query, total);
    reply.headers(page.headers);
    return { data: items.map((item) => PlanetDto.from(item)), meta: page.meta } satisfies PlanetPageDto;
  }

  @Post()
  @UserAuth()
  @Idempotent({ scope: 'caller' })
  @ApiOperation({
    summary: 'Create a planet',
    description:
      'You become its creator: only you can change or delete it. A Planet as the Galaxy types it is accepted: the ' +
      'fields the server sets (id, lastUpdated, creator, satellites, image) are ignored, and further numeric ' +
      'physicalProperties are kept. Refused by design: successCallbackUrl and failureCallbackUrl (this server calls ' +
      'no URL a client gives it: a server-side request forgery risk), and XML bodies (415).',
  })
  @ApiCreatedResponse({
    type: PlanetDto,
    description: 'Created',
    headers: locationHeader('The URI of the new planet.', '/planets/1'),
  })
  @ApiProblems(
    ...jsonBodyProblems('Invalid input: unknown fields, wrong types or values, or a callback URL.', INVALID_PLANET),
    UNAVAILABLE,
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

  @Get(':planetId')
  @Public()
  @ApiOperation({
    summary: 'Get a planet',
    description:
      'The planet with its satellites, and its ETag; send If-None-Match to get a 304 when it has not changed, If-Match with a change to make it only then.',
  })
  @ApiParam(PLANET_ID_PARAM)
  @ConditionalGet(PLANET_TAGS)
  @ApiOkResponse({ type: PlanetDto, description: 'Planet found' })
  @ApiProblems(BAD_PLANET_ID, PLANET_NOT_FOUND, UNAVAILABLE)
  async getPlanet(@PlanetId() planetId: number, @Res() reply: FastifyReply): Promise<void> {
    const planet = PlanetDto.from(await this.celestialBodies.getPlanet(planetId));
    await sendTagged(reply, planetEtag(planet), planet);
  }

  @Put(':planetId')
  @UserAuth()
  @ApiOperation({
    summary: 'Update a planet',
    description:
      "Replaces the planet's fields (what the body leaves out is cleared). Only its creator may. As for createPlanet, " +
      'the fields the server sets are ignored and the callback URLs refused; an id, when sent, must be the planetId ' +
      'of the path (else 400).',
  })
  @ApiParam(PLANET_ID_PARAM)
  @ConditionalChange(PLANET_TAGS)
  @ApiOkResponse({ type: PlanetDto, description: 'Planet updated successfully' })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: planetId is not a positive integer, or the body has unknown fields, wrong types or values, a ' +
        'callback URL, or an id other than planetId.',
      INVALID_PLANET,
    ),
    NOT_CREATOR,
    PLANET_NOT_FOUND,
    UNAVAILABLE,
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

  @Delete(':planetId')
  @HttpCode(204)
  @UserAuth()
  @ApiOperation({
    summary: 'Delete a planet',
    description: 'Deletes the planet with its satellites and image. Only its creator may.',
  })
  @ApiParam(PLANET_ID_PARAM)
  @ConditionalChange(PLANET_TAGS)
  @ApiNoContentResponse({ description: 'Deleted, with its satellites.' })
  @ApiProblems(
    ...unexpectedBodyProblems(BAD_PLANET_ID.description, INVALID_PLANET_ID),
    NOT_CREATOR,
    PLANET_NOT_FOUND,
    UNAVAILABLE,
  )
  async deletePlanet(
    @PlanetId() planetId: number,
    @CurrentUser() user: AuthenticatedUser,
    @Conditions() conditions: ChangeConditions,
  ) {
    await this.celestialBodies.deletePlanet(planetId, user.id, conditions);
  }

  @Post(':planetId/image')
  @HttpCode(200)
  @UserAuth()
  @AcceptsMultipart(IMAGE_FORM_DETAIL)
  @Idempotent({ scope: 'caller', body: 'upload' })
  @ApiOperation({
    summary: 'Upload an image to a planet',
    description:
      'PNG, JPEG, GIF or WebP, recognised by its bytes (not by its name or declared type), at most 5 MiB. ' +
      'The form holds exactly one part, the file in the field "image"; any other part is refused. ' +
      "Replaces any previous image. Only the planet's creator may.",
  })
  @ApiParam(PLANET_ID_PARAM)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    required: true,
    schema: {
      type: 'object',
      required: ['image'],
      additionalProperties: false,
      properties: {
        image: {
          type: 'string',
          format: 'binary',
          description: 'The image file to upload',
          maxLength: MAX_IMAGE_BYTES,
        },
      },
    },
    // The types accepted; the part's declared type is not trusted, its bytes are.
    encoding: { image: { contentType: IMAGE_TYPES.join(', ') } },
  })
  @ApiOkResponse({ type: ImageUploadedDto, description: 'Image uploaded' })
  @ApiProblems(
    {
      types: [VALIDATION],
      description:
        'No file in the field "image", a file that is not an accepted image, any other part (a text field, a second file ' +
        'or a file under another name, named in errors), a multipart body that is malformed or ends early, or a bad planetId.',
      examples: [() => new MissingImageError()],
    },
    NOT_CREATOR,
    PLANET_NOT_FOUND,
    {
      types: [REQUEST_TIMEOUT],
      description:
        'The body stopped arriving for longer than the server allows (UPLOAD_IDLE_TIMEOUT_MS); the connection is closed.',
    },
    { types: [IMAGE_TOO_LARGE], description: 'The image is larger than 5 MiB.' },
    {
      types: [UNSUPPORTED_MEDIA_TYPE],
      description: 'The body is not multipart/form-data.',
      examples: [() => new UnsupportedMediaTypeError(IMAGE_FORM_DETAIL)],
    },
    {
      types: [UNAVAILABLE],
      description:
        'Temporarily unavailable: the server is storing as many uploads as it may at once, or the database is; retry after the time given in Retry-After.',
    },
  )
  @ApiTooManyRequests(
    'Too many uploads of yours in progress: one user may have 2 at once (RateLimit-Policy "uploads", in concurrent requests); retry after the time given in Retry-After.',
    () => new TooManyUploadsError(2),
  )
  async uploadImage(
    @PlanetId() planetId: number,
    @CurrentUser() user: AuthenticatedUser,
    @Req() request: FastifyRequest,
  ): Promise<ImageUploadedDto> {
    const image = await this.celestialBodies.uploadImage(planetId, user.id, async () => {
      const received = await readImageForm(request, { idleTimeoutMs: this.settings.UPLOAD_IDLE_TIMEOUT_MS });
      // A retry with the same Idempotency-Key is the same upload only with the same bytes.
      await claimIdempotentUpload(received.data);
      return received;
    });
    return {
      message: 'Image uploaded successfully',
      imageUrl: planetImagePath(planetId),
      uploadedAt: image.uploadedAt.toISOString(),
      fileSize: image.byteSize,
      mimeType: image.contentType,
    };
  }

  @Get(':planetId/image')
  @Public()
  @ApiOperation({
    summary: "Get a planet's image",
    description:
      'The uploaded image, with its type and an ETag; send If-None-Match to get a 304 when it has not changed.',
  })
  @ApiParam(PLANET_ID_PARAM)
  @ApiOkResponse({
    description: 'The image',
    headers: IMAGE_ETAG,
    content: Object.fromEntries(IMAGE_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
  })
  @ApiResponse({
    status: 304,
    description: 'Not modified: the image still has the ETag sent in If-None-Match.',
    headers: IMAGE_ETAG,
  })
  @ApiProblems(
    BAD_PLANET_ID,
    {
      types: [NOT_FOUND],
      description: 'No such planet, or it has no image.',
      examples: [() => new PlanetImageNotFoundError(42)],
    },
    UNAVAILABLE,
  )
  async getPlanetImage(@PlanetId() planetId: number, @Res() reply: FastifyReply): Promise<void> {
    // Public and meant to be shown on other sites' pages, unlike the API's other responses.
    reply.header('Cache-Control', 'no-cache').header('Cross-Origin-Resource-Policy', 'cross-origin');
    const current = await this.celestialBodies.getImage(planetId, false);
    if (await notModified(reply, etagOfHash(current.sha256))) return;
    // The bytes come from a second read, so that a 304 never loads them; the ETag sent is
    // that of the bytes sent, should the image have been replaced in between.
    const image = await this.celestialBodies.getImage(planetId, true);
    await reply.status(200).header('ETag', etagOfHash(image.sha256)).type(image.contentType).send(image.data);
  }
}

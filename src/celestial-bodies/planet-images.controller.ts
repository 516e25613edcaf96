import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
import { Public } from '../common/auth';
import {
  absoluteUrl,
  AcceptsMultipart,
  ConditionalGet,
  type EntityTags,
  etagOfHash,
  notModified,
} from '../common/http';
import { claimIdempotentUpload, Idempotent } from '../common/idempotency';
import {
  NOT_FOUND,
  REQUEST_TIMEOUT,
  UNAVAILABLE,
  UNSUPPORTED_MEDIA_TYPE,
  UnsupportedMediaTypeError,
  VALIDATION,
} from '../common/problem';
import { ApiTooManyRequests } from '../common/rate-limit';
import { ApiProblems } from '../common/swagger';
import { AppConfig } from '../config';
import {
  IMAGE_TOO_LARGE,
  MissingImageError,
  PlanetImageNotFoundError,
  TooManyUploadsError,
} from './celestial-bodies.errors';
import { CelestialBodiesService } from './celestial-bodies.service';
import { CelestialBodiesSettings } from './celestial-bodies.settings';
import { ImageUploadedDto } from './dto/image-uploaded.dto';
import { planetImagePath } from './dto/planet.dto';
import { IMAGE_FORM_DETAIL, readImageForm } from './image-form';
import { IMAGE_TYPES, MAX_IMAGE_BYTES } from './image-upload';
import { ApiPlanetId, PlanetId } from './planet-id.param';
import { NOT_CREATOR } from './planets.controller';

const IMAGE_TAGS: EntityTags = {
  resource: 'image',
  etag: { description: 'Entity tag of the image (its SHA-256)', example: '"33a64df551"' },
};

/** A planet's image: /planets/{planetId}/image. */
@ApiTags('Planets')
@Controller('planets')
@ApiProblems(UNAVAILABLE)
export class PlanetImagesController {
  constructor(
    private readonly celestialBodies: CelestialBodiesService,
    private readonly settings: CelestialBodiesSettings,
    private readonly config: AppConfig,
  ) {}

  /**
   * Upload an image to a planet
   * @remarks PNG, JPEG, GIF or WebP, recognised by its bytes (not by its name or declared type), at most 5 MiB. The
   * form holds exactly one part, the file in the field "image"; any other part is refused. Replaces any previous image.
   * Only the planet's creator may.
   */
  @Post(':planetId/image')
  @HttpCode(200)
  @UserAuth()
  @AcceptsMultipart(IMAGE_FORM_DETAIL)
  @Idempotent({ scope: 'caller', body: 'upload' })
  @ApiPlanetId()
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
        'or a file under another name, named in errors), or a multipart body that is malformed or ends early.',
      examples: [() => new MissingImageError()],
    },
    NOT_CREATOR,
    {
      types: [REQUEST_TIMEOUT],
      description:
        'The body stopped arriving for longer than the server allows (UPLOAD_IDLE_TIMEOUT_MS); the connection is closed.',
    },
    { types: [IMAGE_TOO_LARGE], description: 'The image is larger than 5 MiB.' },
    {
      types: [UNSUPPORTED_MEDIA_TYPE],
      description: 'The body is not multipart/form-data, or is sent compressed (Content-Encoding).',
      examples: [() => new UnsupportedMediaTypeError(IMAGE_FORM_DETAIL)],
    },
    {
      types: [UNAVAILABLE],
      description: 'The server is storing as many uploads as it may at once.',
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
      imageUrl: absoluteUrl(request, this.config.ownBaseUrl, planetImagePath(planetId)),
      uploadedAt: image.uploadedAt.toISOString(),
      fileSize: image.byteSize,
      mimeType: image.contentType,
    };
  }

  /**
   * Get a planet's image
   * @remarks The uploaded image, with its type and an ETag; send If-None-Match to get a 304 when it has not changed.
   */
  @Get(':planetId/image')
  @Public()
  @ApiPlanetId()
  @ConditionalGet(IMAGE_TAGS)
  @ApiOkResponse({
    description: 'The image',
    content: Object.fromEntries(IMAGE_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
  })
  @ApiProblems({
    types: [NOT_FOUND],
    description: 'The planet has no image.',
    examples: [() => new PlanetImageNotFoundError(42)],
  })
  async getPlanetImage(@PlanetId() planetId: number, @Res() reply: FastifyReply): Promise<void> {
    // Public and meant to be shown on other sites' pages, unlike the API's other responses.
    reply.header('Cache-Control', 'no-cache').header('Cross-Origin-Resource-Policy', 'cross-origin');
    const current = await this.celestialBodies.getImage(planetId, false);
    if (await notModified(reply, etagOfHash(current.sha256), { type: current.contentType, size: current.byteSize }))
      return;
    // The bytes come from a second read, so that a 304 never loads them; the ETag sent is
    // that of the bytes sent, should the image have been replaced in between.
    const image = await this.celestialBodies.getImage(planetId, true);
    await reply.status(200).header('ETag', etagOfHash(image.sha256)).type(image.contentType).send(image.data);
  }
}

import { DomainError, ForbiddenError, NotFoundError, ValidationFailedError } from '../common/problem/problem';

export class PlanetNotFoundError extends NotFoundError {
  constructor(planetId: number) {
    super(`No planet with id ${planetId} exists.`);
  }
}

/** A satellite names a planet that does not exist: 404, like any request about a missing planet. */
export class OrbitedPlanetNotFoundError extends NotFoundError {
  constructor(planetId: number) {
    super(`orbit.planet.id: no planet with id ${planetId} exists.`);
  }
}

export class NotPlanetCreatorError extends ForbiddenError {
  constructor() {
    super('Only the user who created this planet may change it.');
  }
}

export class PlanetImageNotFoundError extends NotFoundError {
  constructor(planetId: number) {
    super(`Planet ${planetId} has no image.`);
  }
}

export class NotAnImageError extends ValidationFailedError {
  constructor() {
    super(
      [{ field: 'image', message: 'image must be a PNG, JPEG, GIF or WebP file (recognised by its content, not its name or declared type)' }],
      'The uploaded file is not an image of an accepted type.',
    );
  }
}

export class MissingImageError extends ValidationFailedError {
  constructor() {
    super([{ field: 'image', message: 'image is required: send the file as multipart/form-data in the field "image"' }]);
  }
}

export class ImageTooLargeError extends DomainError {
  readonly status = 413;
  readonly slug = 'image-too-large';
  readonly title = 'Image too large';
  constructor(maxBytes: number) {
    super(`An image may be at most ${maxBytes} bytes (${maxBytes / 1024 / 1024} MiB).`);
  }
}

/** A multipart body sent to a route that reads JSON: the same 415 Fastify gives any other type. */
export class UnsupportedMediaTypeError extends DomainError {
  readonly status = 415;
  readonly slug = 'unsupported-media-type';
  readonly title = 'Unsupported media type';
  constructor() {
    super('Send the body as application/json.');
  }
}

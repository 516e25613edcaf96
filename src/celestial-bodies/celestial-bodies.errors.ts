import { type FailedCondition, preconditionFailedDetail } from '../common/http';
import {
  ConflictError,
  declareProblemExample,
  defineProblemType,
  DomainError,
  FORBIDDEN,
  ForbiddenError,
  NotFoundError,
  PRECONDITION_FAILED,
  ServiceUnavailableError,
  ValidationFailedError,
} from '../common/problem';
import { TooManyRequestsError } from '../common/rate-limit';

export const IMAGE_TOO_LARGE = defineProblemType({
  slug: 'image-too-large',
  status: 413,
  title: 'Image too large',
  meaning:
    "The uploaded image is larger than a planet's image may be (5 MiB). Nothing was stored; the previous image, if any, stays.",
  action: 'Scale or compress the image below the limit in the detail, then upload it again.',
});

export const SATELLITE_LIMIT = defineProblemType({
  slug: 'satellite-limit',
  status: 409,
  title: 'Too many satellites',
  meaning:
    'The planet already has the maximum number of satellites a planet may have. Nothing was added. Every satellite is listed with its planet, so the bound keeps planets and pages of planets readable.',
  action:
    "Delete the planet's satellites that are no longer wanted (deleting the planet deletes them), or add the satellite to another planet.",
  example: () => new SatelliteLimitError(14, 25),
});

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

/**
 * A conditional header of a change is false: If-Match names none of the planet's current
 * ETags (someone changed it since the client read it, or the tag is weak and cannot match),
 * or If-None-Match is `*` or names its current one.
 */
export class PlanetPreconditionFailedError extends DomainError {
  constructor(planetId: number, failed: FailedCondition) {
    super(PRECONDITION_FAILED, preconditionFailedDetail(`Planet ${planetId}`, failed));
  }
}

export class NotPlanetCreatorError extends ForbiddenError {
  constructor() {
    super('Only the user who created this planet may change it or add satellites to it.');
  }
}

/** The planet a satellite would orbit has as many satellites as a planet may. */
export class SatelliteLimitError extends ConflictError {
  constructor(planetId: number, limit: number) {
    super(SATELLITE_LIMIT, `Planet ${planetId} already has ${limit} satellites, the most a planet may have.`);
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
      [
        {
          field: 'image',
          message:
            'image must be a PNG, JPEG, GIF or WebP file (recognised by its content, not its name or declared type)',
        },
      ],
      'The uploaded file is not an image of an accepted type.',
    );
  }
}

export class MissingImageError extends ValidationFailedError {
  constructor() {
    super([
      { field: 'image', message: 'image is required: send the file as multipart/form-data in the field "image"' },
    ]);
  }
}

/** The upload form holds a part besides its one file in "image": refused, never silently dropped. */
export class UnexpectedFormPartError extends ValidationFailedError {
  constructor(fieldName: string, isFile: boolean) {
    const message =
      fieldName === 'image' && !isFile
        ? 'image must be a file, not a text field'
        : `${isFile ? 'a file' : 'a text field'} named "${fieldName}" is not accepted: the form takes one part, a file in the field "image"`;
    super(
      [{ field: fieldName, message }],
      'The upload form must hold exactly one part: the file in the field "image".',
    );
  }
}

/** The multipart body is broken: it ends early, misses its closing boundary, or the client went away. */
export class MalformedUploadError extends ValidationFailedError {
  constructor() {
    super(
      [{ field: 'image', message: 'the multipart/form-data body is malformed or ended before it was complete' }],
      'The upload did not arrive whole.',
    );
  }
}

export class ImageTooLargeError extends DomainError {
  constructor(maxBytes: number) {
    super(IMAGE_TOO_LARGE, `An image may be at most ${maxBytes} bytes (${maxBytes / 1024 / 1024} MiB).`);
  }
}

export class UploadsBusyError extends ServiceUnavailableError {
  constructor() {
    super('Too many uploads are being stored on this server; retry shortly.', 1);
  }
}

/** The user already has as many uploads in progress as one user may. */
export class TooManyUploadsError extends TooManyRequestsError {
  constructor(limit: number) {
    super(
      `You have ${limit} uploads in progress already; send the next when one has finished.`,
      { name: 'uploads', limit, quotaUnit: 'concurrent-requests' },
      1,
    );
  }
}

declareProblemExample(FORBIDDEN, () => new NotPlanetCreatorError());
declareProblemExample(PRECONDITION_FAILED, () => new PlanetPreconditionFailedError(14, 'If-Match'));

import { type ArgumentMetadata, Param, ParseUUIDPipe } from '@nestjs/common';

import { ValidationFailedError } from '../problem/problem';
import { declareProblemExample, VALIDATION } from '../problem/problem-types';

/** The answer to a path parameter `name` that is not a UUID. */
export const notAUuid = (name: string): ValidationFailedError =>
  new ValidationFailedError([{ field: name, message: `${name} must be a UUID` }]);

/**
 * A UUID in its canonical form (RFC 9562: lower case on output, either case on input), so
 * that a handler comparing ids in memory finds what the database, which compares uuids by
 * value, would.
 */
class CanonicalUuidPipe extends ParseUUIDPipe {
  override async transform(value: string, metadata: ArgumentMetadata): Promise<string> {
    // The parent answers the value it was given, or throws.
    await super.transform(value, metadata);
    return value.toLowerCase();
  }
}

/** A path parameter that must be a UUID, read in lower case; anything else is a 400 naming the parameter. */
export const UuidParam = (name: string) =>
  Param(name, new CanonicalUuidPipe({ exceptionFactory: () => notAUuid(name) }));

declareProblemExample(VALIDATION, () => notAUuid('id'));

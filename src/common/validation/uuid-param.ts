import { Param, type PipeTransform } from '@nestjs/common';

import { ValidationFailedError } from '../problem/problem';
import { declareProblemExample, VALIDATION } from '../problem/problem-types';

/** The answer to a path parameter `name` that is not a UUID. */
export const notAUuid = (name: string): ValidationFailedError =>
  new ValidationFailedError([{ field: name, message: `${name} must be a UUID` }]);

/**
 * RFC 9562's form, 8-4-4-4-12 hex digits of any version and variant, as PostgreSQL's uuid type
 * takes it (Nest's ParseUUIDPipe also checks the version and variant digits, so it would call a
 * well-formed id no UUID where the document promises a 404).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A UUID in its canonical form (lower case on output, either case on input), so that a handler
 * comparing ids in memory finds what the database, which compares uuids by value, would.
 */
class CanonicalUuidPipe implements PipeTransform<unknown, string> {
  constructor(private readonly name: string) {}

  transform(value: unknown): string {
    if (typeof value !== 'string' || !UUID.test(value)) throw notAUuid(this.name);
    return value.toLowerCase();
  }
}

/** A path parameter that must be a UUID, read in lower case; anything else is a 400 naming the parameter. */
export const UuidParam = (name: string) => Param(name, new CanonicalUuidPipe(name));

declareProblemExample(VALIDATION, () => notAUuid('id'));

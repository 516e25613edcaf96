import { Param, ParseUUIDPipe } from '@nestjs/common';

import { ValidationFailedError } from '../problem/problem';

/** A path parameter that must be a UUID; anything else is a 400 naming the parameter. */
export const UuidParam = (name: string) =>
  Param(
    name,
    new ParseUUIDPipe({
      exceptionFactory: () => new ValidationFailedError([{ field: name, message: `${name} must be a UUID` }]),
    }),
  );

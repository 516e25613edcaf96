import { Param, ParseUUIDPipe } from '@nestjs/common';

import { ValidationFailedError } from '../problem/problem';
import { declareProblemExample, VALIDATION } from '../problem/problem-types';

/** The answer to a path parameter `name` that is not a UUID. */
export const notAUuid = (name: string): ValidationFailedError =>
  new ValidationFailedError([{ field: name, message: `${name} must be a UUID` }]);

/** A path parameter that must be a UUID; anything else is a 400 naming the parameter. */
export const UuidParam = (name: string) => Param(name, new ParseUUIDPipe({ exceptionFactory: () => notAUuid(name) }));

declareProblemExample(VALIDATION, () => notAUuid('id'));

import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';

import { FieldError, ValidationFailedError } from '../problem/problem';
import { jsonShapeErrors } from './json-shape';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * class-validator with the house rules: unknown fields are errors, values are converted
 * to the DTO class, and every failure becomes a 400 problem listing each offending field.
 * A body must be a JSON object; a route with an all-optional body accepts none at all.
 */
@Injectable()
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationFailedError(flatten(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Custom parameter decorators hand over what the server made (the authenticated
    // caller, a parsed id), not client input.
    if (metadata.type === 'custom') return value;
    const validatesClass = metadata.metatype !== undefined && this.toValidate(metadata);
    if (metadata.type === 'body' && validatesClass) {
      if (value === undefined) value = {};
      else if (!isPlainObject(value)) {
        throw new ValidationFailedError([{ field: 'body', message: 'The body must be a JSON object' }]);
      }
    }
    // Before class-transformer and class-validator, whose walks recurse and skip inherited names.
    const errors = jsonShapeErrors(value, metadata.data ?? '');
    if (errors.length > 0) throw new ValidationFailedError(errors);
    return super.transform(value, metadata);
  }
}

import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldError, ValidationFailedError } from '../problem/problem';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be taken as text, or undefined when it can. */
function textProblem(value: string, field: string): string | undefined {
  // PostgreSQL cannot store U+0000 in text columns.
  if (value.includes('\u0000')) return `${field} must not contain NUL characters`;
  // A lone surrogate is not Unicode: it would be stored as U+FFFD (silently changed), and
  // some validators (encodeURI in isEmail) throw on it.
  if (LONE_SURROGATE.test(value)) return `${field} must be valid Unicode text (it contains a lone surrogate)`;
  return undefined;
}

/** Every string in a parsed body or parameter that cannot be taken as text. */
function textErrors(value: unknown, path: string): FieldError[] {
  if (typeof value === 'string') {
    const message = textProblem(value, path);
    return message ? [{ field: path, message }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => textErrors(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => textErrors(v, path ? `${path}.${k}` : k));
  }
  return [];
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
    const errors = textErrors(value, metadata.type === 'body' ? '' : (metadata.data ?? metadata.type));
    if (errors.length > 0) throw new ValidationFailedError(errors);
    return super.transform(value, metadata);
  }
}

import { ArgumentMetadata, Injectable, type Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

import { FieldError, ValidationFailedError } from '../problem/problem';
import { jsonShapeErrors } from './json-shape';

// Rules that say what type a value must be. A value of the wrong type fails the range and size
// rules too, whose messages would then be untrue ("days must not be greater than 90" for 7.5).
const TYPE_RULES = new Set(['isArray', 'isBoolean', 'isInt', 'isNumber', 'isObject', 'isString']);

/**
 * The messages of a field's failed rules: a missing value's alone (its type rules fail too),
 * else the type's alone when the value has the wrong type.
 */
function messagesOf(constraints: Record<string, string>): string[] {
  if (constraints.isDefined) return [constraints.isDefined];
  const typeRules = Object.keys(constraints).filter((rule) => TYPE_RULES.has(rule));
  return typeRules.length > 0 ? typeRules.map((rule) => constraints[rule]) : Object.values(constraints);
}

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = messagesOf(error.constraints ?? {}).map((message) => ({ field, message }));
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
const VALIDATOR_OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

/** The pipe's answer to failed rules. */
const validationFailed = (errors: ValidationError[]): ValidationFailedError =>
  new ValidationFailedError(flatten(errors));

@Injectable()
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({ ...VALIDATOR_OPTIONS, transform: true, exceptionFactory: validationFailed });
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
    try {
      return await super.transform(value, metadata);
    } catch (err) {
      throw metadata.type === 'query' && isPlainObject(value) ? sayRepeated(err, value) : err;
    }
  }
}

/**
 * A query parameter given twice (`limit=5&limit=2`) arrives as a list, which its rules refuse
 * as the wrong type ("must be an integer"): said as what it is. Unknown ones keep their message.
 */
function sayRepeated(err: unknown, query: Record<string, unknown>): unknown {
  if (!(err instanceof ValidationFailedError)) return err;
  const repeated = (field: string) => Array.isArray(query[field]);
  const errors = err.errors.map((error) =>
    repeated(error.field) && !error.message.endsWith('should not exist')
      ? { field: error.field, message: `${error.field} must be given once` }
      : error,
  );
  const same = (a: FieldError, b: FieldError) => a.field === b.field && a.message === b.message;
  return new ValidationFailedError(errors.filter((error, i) => errors.findIndex((other) => same(other, error)) === i));
}

/**
 * What StrictValidationPipe answers when a route's body or query, of class `metatype`, is
 * `value`: the same shape check, class-transformer and class-validator options, and error,
 * run synchronously (for the OpenAPI examples, which are made before any request). Throws
 * when `value` is valid: a sample meant to be refused must be.
 */
export function strictValidationError(metatype: Type, value: unknown, where: 'body' | 'query'): ValidationFailedError {
  const shape = jsonShapeErrors(value, '');
  if (shape.length > 0) return new ValidationFailedError(shape);
  const errors = validateSync(plainToInstance(metatype, value) as object, VALIDATOR_OPTIONS);
  if (errors.length === 0) throw new Error(`${metatype.name}: the ${where} ${JSON.stringify(value)} is valid`);
  return validationFailed(errors);
}

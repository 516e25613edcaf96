import 'reflect-metadata';

import { IsString } from 'class-validator';

import { CredentialsDto } from '../../src/auth/dto/credentials.dto';
import {
  MAX_ERROR_FIELD_LENGTH,
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_LISTED_ERRORS,
  ValidationFailedError,
} from '../../src/common/problem/problem';
import { problemOfError } from '../../src/common/problem/problem-reply';
import { StrictValidationPipe } from '../../src/common/validation';
import { jsonShapeErrors, MAX_ARRAY_ITEMS, MAX_OBJECT_MEMBERS } from '../../src/common/validation/json-shape';

/** A 64 KiB JSON object of short unknown fields, as an unauthenticated client can send to /auth/token. */
function manyUnknownFields(): Record<string, number> {
  const body: Record<string, number> = {};
  let size = 2;
  for (let i = 0; size < 64 * 1024 - 16; i++) {
    body[`a${i}`] = 0;
    size += `"a${i}":0,`.length;
  }
  return body;
}

/** A body of 30 text fields, each required. */
class ThirtyFields {}
for (let i = 0; i < 30; i++) IsString()(ThirtyFields.prototype, `f${i}`);

async function refusal(value: unknown, metatype: new () => object): Promise<ValidationFailedError> {
  try {
    await new StrictValidationPipe().transform(value, { type: 'body', metatype, data: undefined });
  } catch (err) {
    if (err instanceof ValidationFailedError) return err;
    throw err;
  }
  throw new Error('the value was accepted');
}

describe('a validation problem', () => {
  it('lists at most MAX_LISTED_ERRORS errors, and says in its detail that more were found', () => {
    const errors = Array.from({ length: 6607 }, (_, i) => ({
      field: `f${i}`,
      message: `property f${i} should not exist`,
    }));
    const problem = problemOfError(new ValidationFailedError(errors));
    expect(problem.errors).toEqual(errors.slice(0, MAX_LISTED_ERRORS));
    expect(problem.detail).toBe(
      `The request has invalid or unexpected values; see errors. More than ${MAX_LISTED_ERRORS} were found; errors lists the first ${MAX_LISTED_ERRORS}.`,
    );
  });

  it('says nothing of more when all are listed', () => {
    const errors = Array.from({ length: MAX_LISTED_ERRORS }, (_, i) => ({ field: `f${i}`, message: 'wrong' }));
    const problem = problemOfError(new ValidationFailedError(errors));
    expect(problem.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(problem.detail).toBe('The request has invalid or unexpected values; see errors.');
  });

  it('cuts a long field and message, with an ellipsis, never through a surrogate pair', () => {
    const field = `${'k'.repeat(MAX_ERROR_FIELD_LENGTH - 2)}😀${'k'.repeat(10_000)}`;
    const problem = problemOfError(
      new ValidationFailedError([{ field, message: `property ${field} should not exist` }]),
    );
    const [error] = problem.errors!;
    expect(error.field).toBe(`${'k'.repeat(MAX_ERROR_FIELD_LENGTH - 2)}…`);
    expect(error.message).toHaveLength(MAX_ERROR_MESSAGE_LENGTH);
    expect(error.message).toMatch(/^property k+😀k+…$/);
  });
});

describe('the shape check before any DTO', () => {
  it('refuses an object of more than MAX_OBJECT_MEMBERS fields with one error, without looking into it', () => {
    const body = manyUnknownFields();
    expect(Object.keys(body).length).toBeGreaterThan(6000);
    expect(jsonShapeErrors(body, '')).toEqual([
      { field: 'body', message: `body must not have more than ${MAX_OBJECT_MEMBERS} fields` },
    ]);
    const nested = { name: 'Mars', physicalProperties: Object.fromEntries(Object.entries(body).slice(0, 101)) };
    expect(jsonShapeErrors(nested, '')).toEqual([
      {
        field: 'physicalProperties',
        message: `physicalProperties must not have more than ${MAX_OBJECT_MEMBERS} fields`,
      },
    ]);
  });

  it('refuses an array of more than MAX_ARRAY_ITEMS items', () => {
    expect(jsonShapeErrors({ satellites: Array.from({ length: MAX_ARRAY_ITEMS + 1 }, () => ({})) }, '')).toEqual([
      { field: 'satellites', message: `satellites must not have more than ${MAX_ARRAY_ITEMS} items` },
    ]);
    expect(jsonShapeErrors({ satellites: Array.from({ length: MAX_ARRAY_ITEMS }, () => ({})) }, '')).toEqual([]);
  });

  it('stops once it has found more errors than a problem lists', () => {
    const body = Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`f${i}`, 'nul\u0000']));
    expect(jsonShapeErrors(body, '')).toHaveLength(MAX_LISTED_ERRORS + 1);
  });
});

describe('the validation pipe', () => {
  it('answers a 64 KiB body of unknown fields with a small problem', async () => {
    const problem = problemOfError(await refusal(manyUnknownFields(), CredentialsDto));
    expect(problem.errors).toEqual([
      { field: 'body', message: `body must not have more than ${MAX_OBJECT_MEMBERS} fields` },
    ]);
    expect(JSON.stringify(problem).length).toBeLessThan(1024);
  });

  it('lists at most MAX_LISTED_ERRORS of the errors class-validator finds', async () => {
    const problem = problemOfError(await refusal({}, ThirtyFields));
    expect(problem.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(problem.detail).toMatch(/More than 20 were found; errors lists the first 20\.$/);
  });
});

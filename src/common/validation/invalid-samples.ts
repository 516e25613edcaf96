import type { Type } from '@nestjs/common';

import { DomainError, ValidationFailedError } from '../problem/problem';
import type { ProblemExample } from '../problem/problem-types';
import { jsonShapeErrors } from './json-shape';
import { strictValidationError } from './strict-validation.pipe';

/*
 * The 400 examples of an operation, made by its own validation from one bad input chosen
 * for it, so that the example's `errors` name a field the operation has: give one to
 * jsonBodyProblems, unexpectedBodyProblems or an @ApiProblems response of VALIDATION.
 */

/** The route's answer to the body `sample`, as StrictValidationPipe validates it against `dto`. */
export const invalidBody =
  (dto: Type, sample: Record<string, unknown>): ProblemExample =>
  () =>
    strictValidationError(dto, sample, 'body');

/** The route's answer to the query `sample` (values as a client sends them: strings), validated against `dto`. */
export const invalidQuery =
  (dto: Type, sample: Record<string, string>): ProblemExample =>
  () =>
    strictValidationError(dto, sample, 'query');

/** The answer to the path parameter `name` holding `value`, where only the shape check applies (a plain @Param). */
export const invalidParam =
  (name: string, value: string): ProblemExample =>
  () => {
    const errors = jsonShapeErrors(value, name);
    if (errors.length === 0) throw new Error(`${name}: ${JSON.stringify(value)} passes the shape check`);
    return new ValidationFailedError(errors);
  };

/** The error `refuse` throws: a parameter decorator's or parser's refusal of a sample input. */
export const refusalOf =
  (refuse: () => unknown): ProblemExample =>
  () => {
    try {
      refuse();
    } catch (err) {
      if (err instanceof DomainError) return err;
      throw err;
    }
    throw new Error('The sample input was accepted; an example needs one that is refused');
  };

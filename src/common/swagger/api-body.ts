import type { Type } from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';

/**
 * An optional JSON body of `type`, with the one example Swagger UI's "Try it out" sends unless
 * the reader edits it (`summary` says what it does): one that works as it is, from anywhere.
 */
export const ApiOptionalBody = (type: Type<unknown>, summary: string, value: object) =>
  ApiBody({ type, required: false, examples: { [summary]: { summary, value } } });

import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsPositive } from 'class-validator';

import { greaterThan } from '../validation';

/**
 * The wire formats a DTO field's TypeScript type cannot say (`number` is neither integer nor
 * float, `string` is no date-time): one decorator each. The @nestjs/swagger CLI plugin adds
 * the rest from the field itself: required from `?`, description and example from its JSDoc,
 * bounds from its validators. What it cannot read goes in `also`: a bound or default that is a
 * named constant (its test-time reading sees only numbers written out), a null example.
 */
type Also = Pick<
  ApiPropertyOptions,
  'readOnly' | 'nullable' | 'description' | 'minimum' | 'maximum' | 'default' | 'example'
> & {
  required?: boolean;
};

export const ApiInt64 = (also: Also = {}) => ApiProperty({ type: 'integer', format: 'int64', ...also });

export const ApiInteger = (also: Also = {}) => ApiProperty({ type: 'integer', ...also });

export const ApiFloat = (also: Also = {}) => ApiProperty({ type: 'number', format: 'float', ...also });

export const ApiDateTime = (also: Also = {}) => ApiProperty({ type: 'string', format: 'date-time', ...also });

/** A calendar day, `2026-11-22` (validated in a body or query by IsFullDate). */
export const ApiDate = (also: Also = {}) => ApiProperty({ type: 'string', format: 'date', ...also });

export const ApiUuid = (also: Also = {}) => ApiProperty({ format: 'uuid', ...also });

/** An absolute URI on this deployment, made as Location is (see absoluteUrl). */
export const ApiUri = (also: Also = {}) => ApiProperty({ type: 'string', format: 'uri', ...also });

/**
 * class-validator's IsPositive, documented as `exclusiveMinimum: 0`. Under a name of its own:
 * the plugin reads `@IsPositive()` as `minimum: 1`, which is wrong for a float (0.5 is positive).
 */
export const IsPositiveNumber = () => applyDecorators(IsPositive(), ApiProperty(greaterThan(0)));

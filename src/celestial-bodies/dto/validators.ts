import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** Finite JSON numbers only (class-validator's IsNumber also takes NaN and Infinity unless told). */
export const FINITE = { allowNaN: false, allowInfinity: false } as const;

/** Trims strings; leaves anything else for the validators to reject. */
export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/**
 * The value must not be below (`'>='`) or above (`'<='`) a sibling property, when both are
 * numbers; e.g. a maximum temperature below the minimum.
 */
export function ComparedTo(operator: '>=' | '<=', sibling: string, options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'comparedTo',
      target: object.constructor,
      propertyName,
      constraints: [operator, sibling],
      options,
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          const other = (args.object as Record<string, unknown>)[sibling];
          if (typeof value !== 'number' || typeof other !== 'number') return true;
          return operator === '>=' ? value >= other : value <= other;
        },
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} must be ${operator === '>=' ? 'at least' : 'at most'} ${sibling}`,
      },
    });
}

// RFC 3339 date-time: date, time, optional fraction, and a mandatory offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** True for a real RFC 3339 date-time that PostgreSQL's timestamptz can hold (years 1 to 9999). */
export function isDateTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return false;
  // Date.UTC rolls 30 February over into March; a real date survives the round trip.
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && !Number.isNaN(Date.parse(value));
}

export function IsDateTime(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isDateTime',
      target: object.constructor,
      propertyName,
      options,
      validator: {
        validate: isDateTime,
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} must be an RFC 3339 date-time with an offset, e.g. 1610-01-07T00:00:00Z`,
      },
    });
}

/**
 * `exclusiveMinimum` as OpenAPI 3.1 (JSON Schema 2020-12) has it: a number. The options
 * type of @nestjs/swagger still has OpenAPI 3.0's boolean; the value is copied as given.
 */
export const greaterThan = (minimum: number) => ({ exclusiveMinimum: minimum as unknown as boolean });

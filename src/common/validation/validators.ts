import { registerDecorator, ValidateIf, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** Finite JSON numbers only (class-validator's IsNumber also takes NaN and Infinity unless told). */
export const FINITE = { allowNaN: false, allowInfinity: false } as const;

/**
 * Like IsOptional, but only an absent property skips validation: null is validated, and
 * refused, like any other value. For fields whose schema does not declare null, where
 * leaving the field out is how a client says "none".
 */
export const IsOmittable = (options?: ValidationOptions) =>
  ValidateIf((_object, value) => value !== undefined, options);

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

export const utf8Length = (value: string): number => Buffer.byteLength(value, 'utf8');

/** A string of `min`..`max` bytes once encoded as UTF-8. */
export function IsUtf8ByteLength(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isUtf8ByteLength',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [min, max],
      options: { message: `$property must be a string of ${min} to ${max} bytes in UTF-8`, ...options },
      validator: {
        validate: (value: unknown) => typeof value === 'string' && utf8Length(value) >= min && utf8Length(value) <= max,
      },
    });
}

// RFC 3339 date-time: date, time, optional fraction, and a mandatory offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

// The instants whose UTC year has four digits, 1 to 9999 (PostgreSQL's timestamptz holds them all).
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * True for a real RFC 3339 date-time whose instant falls in the years 1 to 9999 in UTC.
 * The instant is checked, not the year as written: the value is stored and served in UTC,
 * and 9999-12-31T23:59:59-14:00 is in the year 10000 there, which no RFC 3339 date-time
 * can say (toISOString() would give "+010000-…"); 0001-01-01T00:00:00+14:00 is in year 0.
 */
export function isDateTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  if (!isRealDay(year, month, day)) return false;
  const instant = Date.parse(value);
  return instant >= EARLIEST && instant <= LATEST;
}

const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for an RFC 3339 full-date (`2026-11-22`): a real calendar day in the years 1 to 9999. */
export function isFullDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = FULL_DATE.exec(value);
  if (!m) return false;
  const [year, month, day] = m.slice(1).map(Number);
  return year >= 1 && isRealDay(year, month, day);
}

// Date.UTC rolls 30 February over into March; a real date survives the round trip.
function isRealDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A decorator that refuses a value `check` does not accept, saying what it must be. */
const refusedUnless =
  (name: string, check: (value: unknown) => boolean, mustBe: string) =>
  (options?: ValidationOptions) =>
  (object: object, propertyName: string) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName,
      options,
      validator: {
        validate: check,
        defaultMessage: (args: ValidationArguments) => `${args.property} must be ${mustBe}`,
      },
    });

export const IsDateTime = refusedUnless(
  'isDateTime',
  isDateTime,
  'an RFC 3339 date-time with an offset, e.g. 1610-01-07T00:00:00Z',
);

/** A calendar day as `YYYY-MM-DD` (a field documented with ApiDate), e.g. a date-only query filter. */
export const IsFullDate = refusedUnless('isFullDate', isFullDate, 'a calendar day as YYYY-MM-DD, e.g. 2026-11-22');

/**
 * `exclusiveMinimum` as OpenAPI 3.1 (JSON Schema 2020-12) has it: a number. The options
 * type of @nestjs/swagger still has OpenAPI 3.0's boolean; the value is copied as given.
 */
export const greaterThan = (minimum: number) => ({ exclusiveMinimum: minimum as unknown as boolean });

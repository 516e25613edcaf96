import { registerDecorator, type ValidationArguments } from 'class-validator';

/**
 * The Galaxy's `physicalProperties` take any further measurement as a number
 * (`additionalProperties: number`); this service keeps them, within bounds: at most
 * MAX_EXTRA_MEASUREMENTS, each named by an identifier of at most 50 characters (a name is
 * a JSON key that is echoed back to every reader: no markup, no control characters, no
 * `__proto__`), each a finite number.
 */
export const MAX_EXTRA_MEASUREMENTS = 20;
export const MEASUREMENT_NAME = '^[A-Za-z][A-Za-z0-9_]{0,49}$';

const NAME = new RegExp(MEASUREMENT_NAME);

/** The OpenAPI schema of a further measurement, as `additionalProperties` of PhysicalProperties. */
export const EXTRA_MEASUREMENT_SCHEMA = {
  type: 'number',
  format: 'float',
  description: `A further physical measurement, by a name matching ${MEASUREMENT_NAME}; at most ${MAX_EXTRA_MEASUREMENTS} of them. Kept and returned as sent.`,
} as const;

/** Why `extra` is not a valid set of further measurements, or undefined when it is. */
function fault(extra: unknown): string | undefined {
  if (typeof extra !== 'object' || extra === null) return 'further measurements must be numbers';
  const entries = Object.entries(extra);
  if (entries.length > MAX_EXTRA_MEASUREMENTS)
    return `physicalProperties may hold at most ${MAX_EXTRA_MEASUREMENTS} measurements besides mass, radius, gravity and temperature (got ${entries.length})`;
  for (const [name, value] of entries) {
    if (!NAME.test(name))
      return `measurement name ${JSON.stringify(name.slice(0, 60))} must be a letter then up to 49 letters, digits or underscores`;
    if (typeof value !== 'number' || !Number.isFinite(value)) return `measurement ${name} must be a finite number`;
  }
  return undefined;
}

/** Validates the further measurements that `gatherExtraMeasurements` set aside. */
export function AreExtraMeasurements() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'areExtraMeasurements',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => value === undefined || fault(value) === undefined,
        defaultMessage: (args: ValidationArguments) => fault(args.value) ?? 'invalid measurements',
      },
    });
}

/**
 * class-transformer copies onto the instance every field the body has, declared or not;
 * the validation pipe would refuse the undeclared ones. This moves them into `extra`
 * (a client's own `extra` field included), which alone is then validated, as a whole.
 */
export function gatherExtraMeasurements<T extends object>(value: T, named: readonly string[]): T {
  const fields = value as Record<string, unknown>;
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    // Declared fields are own properties from the start (class fields), set or not.
    if (named.includes(key) || fields[key] === undefined) continue;
    extra[key] = fields[key];
    delete fields[key];
  }
  if (Object.keys(extra).length > 0) fields.extra = extra;
  return value;
}

import { registerDecorator, ValidationOptions } from 'class-validator';

/**
 * bcrypt reads at most 72 bytes and ignores the rest, so a longer password would be
 * accepted on its first 72 bytes alone. Longer ones are refused, never cut. Bytes, not
 * characters: "€" is one character and three bytes.
 */
export const PASSWORD_MIN_BYTES = 8;
export const PASSWORD_MAX_BYTES = 72;

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

import { ConfigValidationError } from '../../src/config/settings';

/** Expects `load` to refuse `value` for the variable `name`, in a message that names it. */
export function expectRefused(load: (env: NodeJS.ProcessEnv) => unknown, name: string, value: string): void {
  expect(() => load({ [name]: value })).toThrow(ConfigValidationError);
  expect(() => load({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:[\\s\\S]*${name}=`));
}

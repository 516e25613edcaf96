import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

/**
 * A class of settings: each property is named after its environment variable (so that an
 * error message names the variable) and has its default as initial value, or none when
 * optional; class-validator decorators state what is valid.
 */
export type SettingsClass<T extends object = object> = new () => T;

/** The names of the variables a settings class reads. */
export const settingNames = (Class: SettingsClass): string[] => Object.keys(new Class());

/**
 * A whole number from an environment variable, spaces around it allowed. Not common/validation's
 * toInt, which is for query strings: it trims nothing.
 */
export const toIntSetting = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
export const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no', ''].includes(v)) return false;
  return value;
};
export const emptyToUndefined = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigValidationError';
  }
}

/**
 * A setting's value as an error message may show it: no secrets, no passwords in URLs. A URL
 * that failed validation may be one a mask cannot read (a `/` in the password, a JDBC
 * `?password=`, one slash after the scheme): only its scheme and host are shown, as URL parsing
 * finds them, and nothing when it does not parse.
 */
function displayValue(name: string, value: unknown): string {
  if (/KEY|SECRET|PASSWORD/.test(name)) return '(hidden)';
  if (value === undefined) return '(unset)';
  if (typeof value === 'string' && name.endsWith('_URL')) return displayUrl(value);
  return JSON.stringify(value);
}

function displayUrl(value: string): string {
  const url = URL.parse(value);
  // A port or path may be part of a password that a misplaced `/` or `#` cut off.
  if (!url?.hostname) return '(not shown: not a URL with a host)';
  return `${JSON.stringify(`${url.protocol}//${url.hostname}`)} (user, password, port, path and query not shown)`;
}

const contexts = new WeakMap<object, object>();

/**
 * What `settings` were read with (see readSettings): the settings of another class that a rule
 * depends on, as a feature's rule may depend on NODE_ENV.
 */
export function contextOf<C extends object>(settings: unknown): C {
  const context = typeof settings === 'object' && settings !== null ? contexts.get(settings) : undefined;
  if (!context) throw new Error('These settings were read without the settings their rules depend on');
  return context as C;
}

/**
 * Reads the variables of `Class` from `env` and validates them, `context` at hand for rules
 * that depend on other settings (contextOf). Returns the settings and one line per bad
 * variable, which names it.
 */
export function readSettings<T extends object>(
  Class: SettingsClass<T>,
  env: NodeJS.ProcessEnv,
  context?: object,
): { settings: T; problems: string[] } {
  const raw: Record<string, unknown> = {};
  for (const name of settingNames(Class)) {
    if (env[name] !== undefined) raw[name] = env[name];
  }
  const settings = plainToInstance(Class, raw);
  if (context) contexts.set(settings, context);
  const errors = validateSync(settings, { forbidUnknownValues: false });
  const problems = errors.map((e) => {
    const messages = Object.values(e.constraints ?? {});
    return `${e.property}=${displayValue(e.property, e.value)}: ${messages.join('; ')}`;
  });
  return { settings, problems };
}

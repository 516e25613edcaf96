import type { INestApplicationContext, Type } from '@nestjs/common';

import { isPlainText, PLAIN_TEXT_RULE } from '../validation';

/** Wrong arguments: the CLI prints the message and its usage, and exits with 2. */
export class UsageError extends Error {}

/** Options a command reads besides --json and --help: text, some repeatable. */
export type CliOptions = Record<string, { type: 'string'; multiple?: boolean }>;

/** The values of `O` as given on the command line; absent when not given. */
export type CliValues<O extends CliOptions> = {
  [K in keyof O]?: O[K]['multiple'] extends true ? string[] : string;
};

/** What a command prints: `lines` as text, or `value` as one JSON object with --json. */
export interface CliOutput {
  lines: string[];
  value: unknown;
}

/** The work of a command, in an application context of its modules. */
export type CliExecute = (context: INestApplicationContext) => Promise<CliOutput>;

/** One command of the operator CLI (`npm run --silent cli -- <name> [options]`). */
export interface CliCommand<O extends CliOptions = CliOptions> {
  /** The words that name it, e.g. `region create`. */
  name: string;
  /** Its options as the usage text shows them after the name, one string per line. */
  synopsis: string[];
  /** What it does, as lines of the usage text. */
  description: string[];
  options?: O;
  /**
   * The modules it needs, with the database, the clock and metrics turned off; none: its
   * context holds only the configuration, and no database is opened.
   */
  modules?: Type[];
  /** Refused, before anything is opened, unless API_ENVIRONMENT is sandbox. */
  sandboxOnly?: boolean;
  /**
   * Checks the options (a UsageError when wrong) before anything is opened, so that a typo
   * answers at once, and returns the work.
   */
  parse(values: CliValues<O>): CliExecute;
}

/** A command, with its values typed after its options. */
export const cliCommand = <const O extends CliOptions>(command: CliCommand<O>): CliCommand<O> => command;

/**
 * A required text option, trimmed; a UsageError when missing, blank, longer than `max`, or
 * not plain text: the rule the API applies to names and descriptions.
 */
export function requireText(value: string | undefined, option: string, max: number): string {
  const text = value?.trim();
  if (!text) throw new UsageError(`--${option} is required`);
  if (text.length > max) throw new UsageError(`--${option} must be at most ${max} characters`);
  if (!isPlainText(text)) throw new UsageError(`--${option}: ${PLAIN_TEXT_RULE}`);
  return text;
}

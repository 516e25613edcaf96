import 'reflect-metadata';

import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

import { DynamicModule, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pino, { type DestinationStream } from 'pino';

import { type CliCommand, UsageError } from './common/cli/cli-command';
import { ClockModule } from './common/clock/clock.module';
import { createRootLogger, PinoNestLogger } from './common/logging/logger';
import { MetricsModule } from './common/metrics/metrics.module';
import { escapeInvisible } from './common/validation/plain-text';
import { AppConfig, loadConfig, lookalikeSettingsOf } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { MIGRATION_COMMANDS } from './database';
import { DatabaseModule } from './database/database.module';
import { FEATURE_SETTINGS } from './feature-settings';
import { REGION_KEYS_COMMANDS } from './region-keys';
import { SANDBOX_COMMANDS } from './sandbox';

/*
 * Why not nest-commander, the usual NestJS way to write a command line: it builds the
 * application context of the whole root module first and parses the arguments inside it,
 * so every command, even `--help`, a typo or `key generate`, would open (and migrate) the
 * database before saying anything. Here each command declares its options and the modules it
 * needs (CliCommand): its arguments are checked by Node's own parseArgs before anything is
 * opened, and only its modules are started. A feature adds commands by exporting a list of
 * them from its index.ts and naming that list below; nothing else changes.
 */

/** Every command, in the order of the usage text. */
const COMMANDS: CliCommand[] = [...REGION_KEYS_COMMANDS, ...SANDBOX_COMMANDS, ...MIGRATION_COMMANDS];

/** A command's entry in the usage text: its name and options, then what it does, indented. */
function usageOf({ name, synopsis, description }: CliCommand): string {
  const [first, ...more] = synopsis;
  return [
    `  ${name} ${first}`,
    ...more.map((line) => `${' '.repeat(name.length + 3)}${line}`),
    ...description.map((line) => `      ${line}`),
  ].join('\n');
}

const USAGE = `Usage: npm run --silent cli -- <command> [options]

Commands:
${COMMANDS.map(usageOf).join('\n')}

Uses the same configuration as the server (DATABASE_URL, or the embedded database in DATA_DIR).`;

/** What a command needs: the configuration, and with its modules the database (migrated on open) and the clock. */
@Module({})
class OperatorModule {
  static forRoot(config: AppConfig, modules: Type[]): DynamicModule {
    return {
      module: OperatorModule,
      imports: [
        ConfigModule.forRoot(config),
        ...(modules.length > 0 ? [DatabaseModule.forCommands(), ClockModule, MetricsModule.off()] : []),
        ...modules,
      ],
    };
  }
}

function parseArguments(argv: string[]) {
  // One option may serve several commands (--region); parseArgs reads it as each declares it.
  const options: ParseArgsOptionsConfig = Object.fromEntries(
    COMMANDS.flatMap((command) => Object.entries(command.options ?? {})),
  );
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...options,
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** Where a run writes: the process's own streams, or a test's. */
export interface CliOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Where the warnings and errors of the commands' modules go, as JSON lines. */
  log: DestinationStream;
}

async function main(argv: string[], env: NodeJS.ProcessEnv, output: CliOutput): Promise<void> {
  const {
    positionals,
    values: { json, help, ...given },
  } = parseArguments(argv);
  const name = positionals.join(' ');
  if (help) {
    output.stdout.write(`${USAGE}\n`);
    return;
  }
  if (name === '') throw new UsageError('No command given');
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`Unknown command: ${name}`);
  // parseArgs knows every command's options; one meant for another command is a mistake here.
  const foreign = Object.keys(given).filter((option) => !Object.hasOwn(command.options ?? {}, option));
  if (foreign.length > 0)
    throw new UsageError(`\`${name}\` takes no ${foreign.map((option) => `--${option}`).join(', ')}`);
  // Arguments are checked before the database is opened: a typo answers at once.
  const execute = command.parse(given);
  const config = loadConfig(env, FEATURE_SETTINGS);
  // stdout carries only the command's output; warnings and errors go to stderr as JSON lines.
  const logger = new PinoNestLogger(createRootLogger({ level: 'warn', destination: output.log }));
  for (const line of lookalikeSettingsOf(config)) logger.warn(line, 'Config');
  // A live configuration never opens its database for a sandbox command.
  if (command.sandboxOnly && !config.isSandbox) {
    throw new Error(
      `\`${name}\` is for a sandbox, and this configuration is live (API_ENVIRONMENT=${config.API_ENVIRONMENT}); nothing was changed. ` +
        "Run it with the sandbox's settings: API_ENVIRONMENT=sandbox and the sandbox's DATABASE_URL or DATA_DIR.",
    );
  }
  const context = await NestFactory.createApplicationContext(OperatorModule.forRoot(config, command.modules ?? []), {
    logger,
    abortOnError: false,
  });
  try {
    const result = await execute(context);
    // Rows stored before the plain-text rule may hold line feeds, terminal escapes or bidi
    // overrides: each such character is printed as its \uXXXX escape (JSON's own in --json).
    const text = json ? escapeInvisible(JSON.stringify(result.value)) : result.lines.map(escapeInvisible).join('\n');
    output.stdout.write(`${text}\n`);
  } finally {
    await context.close();
  }
}

/**
 * Runs one command line and resolves to the exit code: 0, 1 for a failure, 2 for a usage
 * error (with the usage text). cli.ts runs it as the process; tests run it in theirs.
 */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  output: CliOutput = { stdout: process.stdout, stderr: process.stderr, log: pino.destination(2) },
): Promise<number> {
  try {
    await main(argv, env, output);
    return 0;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    output.stderr.write(`error: ${message.split('\n').map(escapeInvisible).join('\n')}\n`);
    if (err instanceof UsageError) output.stderr.write(`\n${USAGE}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

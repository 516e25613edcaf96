import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

import ts from 'typescript';

import type { Exchange } from '../client/exchange';

/** Compiles the program as its tsconfig says, strictness enforced; the diagnostics, formatted. */
export function compileStrict(configPath: string): string[] {
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) return [ts.flattenDiagnosticMessageText(error.messageText, '\n')];
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dirname(configPath));
  const options: ts.CompilerOptions = {
    ...parsed.options,
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmitOnError: true,
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options });
  const emitted = program.emit();
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => '\n',
  };
  return [...parsed.errors, ...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) =>
    ts.formatDiagnostic(d, host).trim(),
  );
}

/**
 * Runs a compiled client program against the server at `baseUrl`: what it wrote to stderr when
 * it failed ('' when it ran through), and the exchanges it recorded (EXCHANGES_FILE), even
 * when it stopped at the first answer it did not expect.
 */
export async function runClientProgram(
  program: string,
  env: Record<string, string>,
): Promise<{ failure: string; exchanges: Exchange[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'client-program-'));
  const exchangesFile = join(dir, 'exchanges.json');
  try {
    const failure = await promisify(execFile)(process.execPath, ['--enable-source-maps', program], {
      env: { PATH: process.env.PATH ?? '', TZ: 'UTC', EXCHANGES_FILE: exchangesFile, ...env },
    }).then(
      () => '',
      (err: { stderr?: string; message: string }) => err.stderr || err.message,
    );
    const exchanges = existsSync(exchangesFile) ? (JSON.parse(readFileSync(exchangesFile, 'utf8')) as Exchange[]) : [];
    return { failure, exchanges };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

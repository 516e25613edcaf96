import { dirname } from 'node:path';

import ts from 'typescript';

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

// Lints Dockerfiles with the checks of VS Code's Docker tooling (dockerfile-utils). Its own
// command fails only on errors; here a warning fails too, so the Dockerfile stays clean.
import { readFileSync } from 'node:fs';
import dockerfileUtils from 'dockerfile-utils';

// The Language Server Protocol's DiagnosticSeverity.Error.
const ERROR = 1;

let problems = 0;
for (const path of process.argv.slice(2)) {
  for (const diagnostic of dockerfileUtils.validate(readFileSync(path, 'utf8'))) {
    const level = diagnostic.severity === ERROR ? 'error' : 'warning';
    console.error(`${path}:${diagnostic.range.start.line + 1}: ${level}: ${diagnostic.message}`);
    problems += 1;
  }
}
process.exitCode = problems === 0 ? 0 : 1;

import './runtime-check';
import './config/load-env-file';
import './tracing';

import { runCli } from './cli-runner';
import { stopTracing } from './common/tracing/tracing';

// The operator CLI as a process: the command line's exit code, once the spans still buffered
// are sent (runCli and stopTracing never reject).
void runCli(process.argv.slice(2))
  .finally(stopTracing)
  .then((code) => process.exit(code));

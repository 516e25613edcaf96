import { applyEnvFile } from './env-file';

try {
  applyEnvFile();
} catch (err) {
  // Before any logger exists: a message for the person at the terminal, then stop.
  process.stderr.write(`Failed to start: ${(err as Error).message}\n`);
  process.exit(1);
}

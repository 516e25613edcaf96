import { execFileSync } from 'node:child_process';

/**
 * Some tests start the compiled server or CLI as a real child process (a second process
 * on one DATA_DIR, the operator CLI), so the build must be current.
 */
export default function globalSetup(): void {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
}

// Jest, with each bare word of its command line (`npm run test:e2e -- missions`) taken as a
// whole name in a test file's name rather than as any part of its path: Jest's own reading of
// it is a regular expression on the file's absolute path, so `missions` would also run
// region-keys-permissions, and every suite of a checkout in a folder named like `wt-missions`.
// A whole name starts the file's name or follows `.` or `-` in it, and ends it or is followed
// by one of them: `region-keys` runs region-keys.e2e-spec.ts and
// region-keys-permissions.e2e-spec.ts, `missions` runs missions.e2e-spec.ts only. Anything else
// (a path, a regular expression, a flag and its value) reaches Jest as it is.
import { wholeNamePattern } from './lib/whole-name.mjs';

const TAKES_A_VALUE = new Set([
  '-c',
  '--config',
  '-t',
  '--testNamePattern',
  '-w',
  '--maxWorkers',
  '--outputFile',
  '--selectProjects',
  '--shard',
  '--seed',
  '--testTimeout',
  '--reporters',
]);
const BARE_WORD = /^[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*$/;

// Jest's workers and the processes the tests start fill large buffers by the hundred (each
// embedded database's start loads its image and files into memory): glibc's malloc puts them on
// transparent huge pages where the kernel allows that on request, one page fault per 2 MB rather
// than per 4 kB. Set before the workers start, which read it as they start; ignored where the C
// library is not glibc; a value already set is kept.
if (!process.env.GLIBC_TUNABLES?.includes('glibc.malloc.hugetlb=')) {
  process.env.GLIBC_TUNABLES = [process.env.GLIBC_TUNABLES, 'glibc.malloc.hugetlb=1'].filter(Boolean).join(':');
}

const args = process.argv.slice(2);
process.argv.splice(
  2,
  args.length,
  ...args.map((arg, index) =>
    BARE_WORD.test(arg) && !TAKES_A_VALUE.has(args[index - 1]) ? wholeNamePattern(arg) : arg,
  ),
);
await import('../node_modules/jest/bin/jest.js');

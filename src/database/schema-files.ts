import { join } from 'node:path';

// Each feature keeps its entities and migrations in its own folder: src/<feature>/entities/
// and src/<feature>/migrations/, found by these globs, so adding one touches only that
// folder. TypeScript sources under Jest, compiled files in dist/ (server, CLI, TypeORM CLI).
const FEATURES = join(__dirname, '..', '*');
const EXTENSION = __filename.slice(__filename.lastIndexOf('.'));

export const ENTITIES = [join(FEATURES, 'entities', `*.entity${EXTENSION}`)];

/** Run in the order of the timestamp in their class names, whichever folder they are in. */
export const MIGRATIONS = [join(FEATURES, 'migrations', `*${EXTENSION}`)];

export { ADVISORY_LOCKS } from './advisory-locks';
export { type BeforeCommit, runWithBeforeCommit } from './before-commit';
export { DatabaseHealth } from './database-health';
export { environmentStampOf } from './environment-stamp';
export { MIGRATION_COMMANDS } from './migration.commands';
export { poolOf } from './pooled-connections';
export { INT4_MAX, sqlValues } from './sql';
export { isUniqueViolation } from './unique-violation';
export { managerOf, type Transaction, UnitOfWork } from './unit-of-work';

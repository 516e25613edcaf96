import './src/config/load-env-file';
import 'reflect-metadata';

import { loadConfig } from './src/config/app-config';
import { openDatabase } from './src/database/data-source';
import { FEATURE_SETTINGS } from './src/feature-settings';

/**
 * The DataSource for the TypeORM CLI, which contributors use to write a migration
 * (`npm run migration:generate`); it only reads the schema. Operators run migrations with
 * the service's own CLI (`cli migration show|run|revert`), which checks the database's
 * environment stamp and takes the migrations' lock. Built from the same settings as the
 * server: DATABASE_URL, or the embedded database in DATA_DIR (stop the server first: the
 * embedded database takes one process at a time).
 *
 * The CLI destroys the DataSource when done and expects the process to end then; the
 * embedded database's socket server would keep it running, so it stops with the DataSource.
 */
export default openDatabase(loadConfig(process.env, FEATURE_SETTINGS)).then(({ dataSource, embedded }) => {
  if (embedded) {
    const destroy = dataSource.destroy.bind(dataSource);
    dataSource.destroy = async () => {
      try {
        await destroy();
      } finally {
        await embedded.stop();
      }
    };
  }
  return dataSource;
});

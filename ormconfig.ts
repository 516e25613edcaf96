import './src/config/load-env-file';
import 'reflect-metadata';
import { loadConfig } from './src/config/app-config';
import { openDatabase } from './src/database/data-source';

/**
 * The DataSource for the TypeORM CLI (`npm run migration:generate|run|revert`), built from
 * the same settings as the server: DATABASE_URL, or the embedded database in DATA_DIR
 * (stop the server first: the embedded database takes one process at a time).
 */
export default openDatabase(loadConfig()).then(({ dataSource }) => dataSource);

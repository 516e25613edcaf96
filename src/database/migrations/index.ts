import { RegionKeys1763800000000 } from './1763800000000-region-keys';

/** Every migration, oldest first. A new migration is written beside this file and added here. */
export const MIGRATIONS: Function[] = [RegionKeys1763800000000];

import { RegionKeys1763800000000 } from './1763800000000-region-keys';
import { Users1763800001000 } from './1763800001000-users';
import { CelestialBodies1763800002000 } from './1763800002000-celestial-bodies';

/** Every migration, oldest first. A new migration is written beside this file and added here. */
export const MIGRATIONS: Function[] = [RegionKeys1763800000000, Users1763800001000, CelestialBodies1763800002000];

import { ApiKey } from '../region-keys/entities/api-key.entity';
import { Region } from '../region-keys/entities/region.entity';
import { User } from '../users/entities/user.entity';
import { Planet } from '../celestial-bodies/entities/planet.entity';
import { PlanetImage } from '../celestial-bodies/entities/planet-image.entity';
import { Satellite } from '../celestial-bodies/entities/satellite.entity';

/** Every TypeORM entity of the service. A new module adds its entities here. */
export const ENTITIES = [Region, ApiKey, User, Planet, Satellite, PlanetImage];

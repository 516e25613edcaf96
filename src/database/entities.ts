import { ApiKey } from '../region-keys/entities/api-key.entity';
import { Region } from '../region-keys/entities/region.entity';

/** Every TypeORM entity of the service. A new module adds its entities here. */
export const ENTITIES = [Region, ApiKey];

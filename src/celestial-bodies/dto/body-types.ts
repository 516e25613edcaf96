import { ApiProperty } from '@nestjs/swagger';

import { PLANET_TYPES, SATELLITE_TYPES } from '../celestial-body-types';

// `type` as a schema of its own (PlanetType, SatelliteType), which generated clients name;
// the plugin makes one only of a TypeScript enum, and lists a union's values in place.
export const ApiPlanetType = (options: { required?: boolean } = {}) =>
  ApiProperty({ enum: PLANET_TYPES, enumName: 'PlanetType', ...options });

export const ApiSatelliteType = () => ApiProperty({ enum: SATELLITE_TYPES, enumName: 'SatelliteType' });

/** The `type` values of the Galaxy: the first five make a planet, the last three a satellite. */
export const PLANET_TYPES = ['terrestrial', 'gas_giant', 'ice_giant', 'dwarf', 'super_earth'] as const;
export type PlanetType = (typeof PLANET_TYPES)[number];

export const SATELLITE_TYPES = ['moon', 'asteroid', 'comet'] as const;
export type SatelliteType = (typeof SATELLITE_TYPES)[number];

export const isPlanetType = (value: unknown): value is PlanetType => PLANET_TYPES.includes(value as PlanetType);
export const isSatelliteType = (value: unknown): value is SatelliteType =>
  SATELLITE_TYPES.includes(value as SatelliteType);

/**
 * How many satellites one planet may have. Every satellite is embedded in its planet's
 * representation, on GET /planets/{planetId} and on the public page of planets, so this
 * bound, with the page's bound on planets, is what bounds the size of those answers.
 */
export const MAX_SATELLITES_PER_PLANET = 25;

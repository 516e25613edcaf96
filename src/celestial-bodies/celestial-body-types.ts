/** The `type` values of the Galaxy: the first five make a planet, the last three a satellite. */
export const PLANET_TYPES = ['terrestrial', 'gas_giant', 'ice_giant', 'dwarf', 'super_earth'] as const;
export type PlanetType = (typeof PLANET_TYPES)[number];

export const SATELLITE_TYPES = ['moon', 'asteroid', 'comet'] as const;
export type SatelliteType = (typeof SATELLITE_TYPES)[number];

export const isPlanetType = (value: unknown): value is PlanetType => PLANET_TYPES.includes(value as PlanetType);
export const isSatelliteType = (value: unknown): value is SatelliteType => SATELLITE_TYPES.includes(value as SatelliteType);

/** Ids are PostgreSQL `integer`s: anything larger cannot name a row, and would fail in SQL. */
export const MAX_ID = 2_147_483_647;

/** SQL list of allowed values for a CHECK constraint (identical text in entity and migration). */
export const sqlValues = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

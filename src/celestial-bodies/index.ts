// The planets (celestial bodies) feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { PlanetNotFoundError } from './celestial-bodies.errors';
export { CelestialBodiesModule } from './celestial-bodies.module';
export { CelestialBodiesSettings } from './celestial-bodies.settings';
export { PLANET_ID_PARAM, PlanetId } from './planet-id.param';
export { PlanetsLookup } from './planets-lookup';
export { SampleSeeder } from './sample-data';

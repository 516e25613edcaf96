// The planets (celestial bodies) feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { CelestialBodiesModule } from './celestial-bodies.module';
export { CelestialBodiesSettings } from './celestial-bodies.settings';
export { SampleSeeder } from './sample-data';

// The health feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { HealthModule } from './health.module';

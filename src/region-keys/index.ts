// The region API keys feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { CurrentRegion, RegionKeyAuth, UnusableKeyRefusal } from './region-key-auth.decorator';
export { REGION_KEYS_COMMANDS } from './region-keys.commands';
export { RegionKeysModule } from './region-keys.module';
export { RegionKeysService } from './region-keys.service';
export { RegionKeysSettings } from './region-keys.settings';
export type { RegionPrincipal } from './region-keys.types';

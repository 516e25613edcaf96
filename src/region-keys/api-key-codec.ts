import { createHash } from 'node:crypto';

// The format lives in common/ because the configuration checks INITIAL_REGION_API_KEY
// against it too; this feature issues and checks keys through this file.
export {
  API_KEY_PREFIX,
  type ApiEnvironment,
  generateApiKey,
  generatedKeyEnvironment,
  isWellFormedApiKey,
  SANDBOX_API_KEY_PREFIX,
} from '../common/auth';

/** What is stored: keys carry 256 bits of entropy, so a fast hash is enough (no bcrypt). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * A short, non-secret reminder of which key this is: first 8, an ellipsis, last 4. For a
 * sandbox key the first 8 are the whole `rk_test_` prefix: the preview then says which
 * environment the key is for, and its last 4 still tell the keys of a region apart.
 */
export function previewApiKey(key: string): string {
  return `${key.slice(0, 8)}\u2026${key.slice(-4)}`;
}

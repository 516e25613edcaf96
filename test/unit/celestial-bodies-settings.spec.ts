import { CelestialBodiesSettings } from '../../src/celestial-bodies/celestial-bodies.settings';
import { loadSettings } from '../../src/config/app-config';
import { ConfigValidationError } from '../../src/config/settings';
import { expectRefused } from '../support/settings';

const load = (env: NodeJS.ProcessEnv) => loadSettings(CelestialBodiesSettings, env);

describe('CelestialBodiesSettings', () => {
  it('applies the documented defaults', () => {
    expect(load({})).toMatchObject({ UPLOAD_CONCURRENCY: 4, UPLOAD_IDLE_TIMEOUT_MS: 10000 });
  });

  it.each([
    ['UPLOAD_CONCURRENCY', '0'],
    ['UPLOAD_IDLE_TIMEOUT_MS', '99'],
  ])('refuses a bad %s and names it', (name, value) => {
    expectRefused(load, name, value);
  });

  describe('SEED_SAMPLE_DATA', () => {
    it('is unset (automatic: embedded database only) by default and when empty', () => {
      expect(load({}).SEED_SAMPLE_DATA).toBeUndefined();
      expect(load({ SEED_SAMPLE_DATA: ' ' }).SEED_SAMPLE_DATA).toBeUndefined();
    });

    it.each([
      ['true', true],
      ['1', true],
      ['false', false],
      ['no', false],
    ])('reads %s as %s', (value, expected) => {
      expect(load({ SEED_SAMPLE_DATA: value }).SEED_SAMPLE_DATA).toBe(expected);
    });

    it('refuses anything else, naming the variable', () => {
      expect(() => load({ SEED_SAMPLE_DATA: 'sometimes' })).toThrow(ConfigValidationError);
      expect(() => load({ SEED_SAMPLE_DATA: 'sometimes' })).toThrow(/SEED_SAMPLE_DATA=/);
    });

    it('refuses false in a sandbox, which always starts with sample data', () => {
      expect(() => load({ API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: 'false' })).toThrow(
        /SEED_SAMPLE_DATA=false: .*sandbox always starts with sample data/,
      );
      expect(load({ API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: 'true' }).SEED_SAMPLE_DATA).toBe(true);
      expect(load({ SEED_SAMPLE_DATA: 'false' }).SEED_SAMPLE_DATA).toBe(false);
    });
  });
});

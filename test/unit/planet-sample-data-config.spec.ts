import { ConfigValidationError, loadConfig } from '../../src/config/app-config';

describe('SEED_SAMPLE_DATA', () => {
  it('is unset (automatic: embedded database only) by default and when empty', () => {
    expect(loadConfig({}).SEED_SAMPLE_DATA).toBeUndefined();
    expect(loadConfig({ SEED_SAMPLE_DATA: ' ' }).SEED_SAMPLE_DATA).toBeUndefined();
  });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['no', false],
  ])('reads %s as %s', (value, expected) => {
    expect(loadConfig({ SEED_SAMPLE_DATA: value }).SEED_SAMPLE_DATA).toBe(expected);
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => loadConfig({ SEED_SAMPLE_DATA: 'sometimes' })).toThrow(ConfigValidationError);
    expect(() => loadConfig({ SEED_SAMPLE_DATA: 'sometimes' })).toThrow(/SEED_SAMPLE_DATA=/);
  });
});

import { ConfigValidationError, loadConfig } from '../../src/config/app-config';

describe('API_KEY_USAGE_FLUSH_INTERVAL_MS', () => {
  it('writes usage once a minute by default', () => {
    expect(loadConfig({}).API_KEY_USAGE_FLUSH_INTERVAL_MS).toBe(60000);
  });

  it.each(['59999', '1000', 'soon', '3600001'])('refuses %s outside tests: usage is written at most once a minute', (value) => {
    for (const NODE_ENV of ['production', 'development']) {
      expect(() => loadConfig({ NODE_ENV, API_KEY_USAGE_FLUSH_INTERVAL_MS: value })).toThrow(ConfigValidationError);
      expect(() => loadConfig({ NODE_ENV, API_KEY_USAGE_FLUSH_INTERVAL_MS: value })).toThrow(/API_KEY_USAGE_FLUSH_INTERVAL_MS=/);
    }
  });

  it('takes a longer interval anywhere, and a shorter one only under NODE_ENV=test', () => {
    expect(loadConfig({ NODE_ENV: 'development', API_KEY_USAGE_FLUSH_INTERVAL_MS: '300000' }).API_KEY_USAGE_FLUSH_INTERVAL_MS).toBe(300000);
    expect(loadConfig({ NODE_ENV: 'test', API_KEY_USAGE_FLUSH_INTERVAL_MS: '100' }).API_KEY_USAGE_FLUSH_INTERVAL_MS).toBe(100);
    expect(() => loadConfig({ NODE_ENV: 'test', API_KEY_USAGE_FLUSH_INTERVAL_MS: '99' })).toThrow(ConfigValidationError);
  });
});

import { loadConfig } from '../../src/config/app-config';

describe('metrics settings', () => {
  it('default to port 9464 on HOST, and 0 turns metrics off', () => {
    const config = loadConfig({});
    expect(config.METRICS_PORT).toBe(9464);
    expect(config.METRICS_HOST).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(loadConfig({ METRICS_PORT: '9100', METRICS_HOST: '127.0.0.1' })).toMatchObject({
      METRICS_PORT: 9100,
      METRICS_HOST: '127.0.0.1',
    });
  });

  it.each(['65536', '-1', 'abc', '9464.5'])('refuse METRICS_PORT=%s, naming the variable', (value) => {
    expect(() => loadConfig({ METRICS_PORT: value })).toThrow(/METRICS_PORT=.*0 to 65535/);
  });

  it('refuse a GIT_COMMIT with spaces', () => {
    expect(loadConfig({ GIT_COMMIT: '1a2b3c4' }).GIT_COMMIT).toBe('1a2b3c4');
    expect(() => loadConfig({ GIT_COMMIT: 'not a commit' })).toThrow(/GIT_COMMIT/);
  });
});

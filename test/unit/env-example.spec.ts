import { readdirSync, readFileSync } from 'node:fs';

import { AppConfig } from '../../src/config/app-config';
import { settingNames } from '../../src/config/settings';
import { FEATURE_SETTINGS } from '../../src/feature-settings';

describe('.env.example', () => {
  it('lists every setting of AppConfig and of each feature, besides those of the OpenTelemetry SDK', () => {
    const listed = [...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map(([, name]) => name);
    const settings = [AppConfig, ...FEATURE_SETTINGS].flatMap(settingNames);
    expect(listed.filter((name) => !name.startsWith('OTEL_')).sort()).toEqual([...settings].sort());
  });
});

describe('FEATURE_SETTINGS', () => {
  it("lists every feature's settings class, so that each is validated at boot before anything opens", async () => {
    const files = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.settings.ts'),
    );
    expect(files.length).toBeGreaterThanOrEqual(FEATURE_SETTINGS.length);
    const classes: unknown[] = [];
    for (const file of files) {
      const exported = (await import(`../../src/${file}`)) as Record<string, unknown>;
      classes.push(...Object.values(exported).filter((value) => typeof value === 'function'));
    }
    expect(classes.length).toBeGreaterThan(0);
    for (const settingsClass of classes) expect(FEATURE_SETTINGS).toContain(settingsClass);
  });
});

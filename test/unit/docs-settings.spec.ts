import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { AppConfig } from '../../src/config/app-config';
import { settingNames, type SettingsClass } from '../../src/config/settings';
import { FEATURE_SETTINGS } from '../../src/feature-settings';

/**
 * The settings tables of docs/operations.md against the settings classes, as
 * env-example.spec.ts does for .env.example: every setting has one row, every row is a
 * setting, and a default the class gives is the one the row shows.
 */
const DOC = 'docs/operations.md';
const SECTION = 'Settings';

interface Row {
  names: string[];
  defaultCell: string;
  line: number;
}

/** The table rows under the level-2 heading SECTION, up to the next level-2 heading. */
function documentedRows(): Row[] {
  const lines = readFileSync(DOC, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${SECTION}`);
  if (start < 0) throw new Error(`${DOC} has no "## ${SECTION}" section`);
  const rows: Row[] = [];
  for (let i = start + 1; i < lines.length && !/^##\s/.test(lines[i]); i++) {
    const cells = lines[i].trim().startsWith('|') ? lines[i].split('|').slice(1, -1) : [];
    // A header row names no variable in backticks, and a delimiter row holds only dashes.
    const names = [...(cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map(([, name]) => name);
    if (names.length > 0) rows.push({ names, defaultCell: cells[1]?.trim() ?? '', line: i + 1 });
  }
  return rows;
}

/** Every settings class with the file that declares it, so that a failure says where to look. */
async function settingsFiles(): Promise<Map<SettingsClass, string>> {
  const files = new Map<SettingsClass, string>([[AppConfig, 'src/config/app-config.ts']]);
  const featureFiles = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.settings.ts'),
  );
  for (const file of featureFiles) {
    const exported = (await import(`../../src/${file}`)) as Record<string, unknown>;
    for (const value of Object.values(exported)) {
      if (typeof value === 'function') files.set(value as SettingsClass, join('src', file));
    }
  }
  for (const Class of FEATURE_SETTINGS) if (!files.has(Class)) files.set(Class, 'src/feature-settings.ts');
  return files;
}

/** How a default is written in the table: in backticks, or "empty" for an empty list. */
function shownDefault(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
}

/** Variables the OpenTelemetry SDK reads, which no settings class holds; the service's code names them. */
function sourceText(): string {
  return readdirSync('src', { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => readFileSync(join('src', file), 'utf8'))
    .join('\n');
}

describe(`${DOC}, "${SECTION}"`, () => {
  let files: Map<SettingsClass, string>;
  let rows: Row[];
  beforeAll(async () => {
    files = await settingsFiles();
    rows = documentedRows();
  });
  const classes = (): SettingsClass[] => [AppConfig, ...FEATURE_SETTINGS];

  it('has a row for every setting of AppConfig and of each feature', () => {
    const documented = new Set(rows.flatMap((row) => row.names));
    const missing = classes().flatMap((Class) =>
      settingNames(Class)
        .filter((name) => !documented.has(name))
        .map((name) => `${name} (${Class.name}, ${files.get(Class)}) has no row in ${DOC}, "${SECTION}"`),
    );
    expect(missing).toEqual([]);
  });

  it('documents only settings that exist, each once', () => {
    const declared = new Set(classes().flatMap(settingNames));
    const source = sourceText();
    const seen = new Map<string, number>();
    const wrong: string[] = [];
    for (const { names, line } of rows) {
      for (const name of names) {
        const where = `${DOC}:${line}`;
        if (seen.has(name)) wrong.push(`${name} (${where}) is documented again; first at line ${seen.get(name)}`);
        seen.set(name, line);
        if (declared.has(name)) continue;
        // The OpenTelemetry SDK's variables belong to no settings class (as in .env.example).
        if (name.startsWith('OTEL_') && source.includes(name)) continue;
        wrong.push(
          name.startsWith('OTEL_')
            ? `${name} (${where}) is not read anywhere in src/`
            : `${name} (${where}) is in no settings class (src/config/app-config.ts, or one listed in src/feature-settings.ts)`,
        );
      }
    }
    expect(wrong).toEqual([]);
  });

  it('shows the default each class gives, where it gives one', () => {
    const rowOf = new Map(rows.flatMap((row) => row.names.map((name) => [name, row] as const)));
    const wrong: string[] = [];
    for (const Class of classes()) {
      const defaults = new Class() as Record<string, unknown>;
      for (const name of settingNames(Class)) {
        const expected = shownDefault(defaults[name]);
        const row = rowOf.get(name);
        if (expected === undefined || !row || row.defaultCell.includes(expected)) continue;
        wrong.push(`${name}: ${files.get(Class)} gives ${expected}, ${DOC}:${row.line} shows "${row.defaultCell}"`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

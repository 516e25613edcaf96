// Medians, the checks against the performance targets, and the Markdown that goes into
// bench/RESULTS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const ms = (n) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : '–');
const ratio = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');

/** Medians of one side's rounds. */
export function summarise(rounds) {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    cpuUs: median(rounds.map((r) => r.cpuUs)),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  };
}

/**
 * The ratio of a scenario: the median of the per-round ratios. Rounds alternate the two
 * servers back to back, so a burst of other work on the machine weighs on both sides of a
 * round; the median then drops the round it hit hardest.
 */
export const roundRatio = (service, other) => median(service.map((s, i) => s.rps / other[i]?.rps));

/** The same comparison by CPU time per request (the other's over the service's: higher is better). */
export const cpuRatio = (service, other) => median(service.map((s, i) => other[i]?.cpuUs / s.cpuUs));

const SERVER_NAMES = { reference: 'reference', ceiling: 'ceiling', problem: 'bare problem server' };

/**
 * One line per scenario: the service, then each server it is compared with (the reference
 * or the bare problem server, then the ceiling) with the ratios of the service to it.
 */
export function scenarioTable(rows) {
  const width = Math.max(...rows.map((row) => row.others.length));
  const head = ['#', 'scenario', 'service req/s', 'p50 ms', 'p99 ms', 'CPU µs/req'];
  const align = ['---', '---', '---:', '---:', '---:', '---:'];
  for (let i = 0; i < width; i++) {
    head.push(i === 0 ? 'compared with' : 'and with', 'req/s', 'p99 ms', 'CPU µs/req', 'ratio (req/s)', 'ratio (CPU)');
    align.push('---', '---:', '---:', '---:', '---:', '---:');
  }
  head.push('non-2xx / errors (service)');
  align.push('---:');
  const lines = [`| ${head.join(' | ')} |`, `| ${align.join(' | ')} |`];
  for (const { scenario, service, others } of rows) {
    const s = summarise(service);
    const cells = [scenario.id, scenario.name, int(s.rps), ms(s.p50), ms(s.p99), int(s.cpuUs)];
    for (let i = 0; i < width; i++) {
      const other = others[i];
      const o = other ? summarise(other.rounds) : {};
      cells.push(
        other ? (SERVER_NAMES[other.name] ?? other.name) : '',
        int(o.rps),
        ms(o.p99),
        int(o.cpuUs),
        ratio(other?.ratio),
        ratio(other?.cpu),
      );
    }
    cells.push(`${s.non2xx} / ${s.errors}`);
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * `value` against `target` (`atLeast` or `atMost`); margin as a signed difference, and as
 * a share of the target when it is missed.
 */
export function check(name, measured, { atLeast, atMost, unit = '', digits = 2, note = '' }) {
  const fmt = (n) => `${n.toFixed(digits)}${unit}`;
  if (!Number.isFinite(measured)) return { name, measured: 'not measured', target: '', met: '–', margin: '', note };
  const target = atLeast ?? atMost;
  const met = atLeast !== undefined ? measured >= atLeast : measured <= atMost;
  const diff = atLeast !== undefined ? measured - atLeast : atMost - measured;
  const margin = met
    ? `+${fmt(Math.abs(diff))}`
    : `missed by ${fmt(Math.abs(diff))} (${Math.round((Math.abs(diff) / Math.abs(target)) * 100)}%)`;
  return {
    name,
    measured: fmt(measured),
    target: `${atLeast !== undefined ? '≥' : '≤'} ${fmt(target)}`,
    met: met ? 'met' : '**missed**',
    margin,
    note,
  };
}

export function targetTable(checks) {
  return [
    '| target | measured | wanted | | margin | by CPU per request |',
    '| --- | ---: | ---: | --- | --- | ---: |',
    ...checks.map((c) => `| ${c.name} | ${c.measured} | ${c.target} | ${c.met} | ${c.margin} | ${c.note} |`),
  ].join('\n');
}

export function keyValueTable(pairs) {
  return ['| measurement | value |', '| --- | --- |', ...pairs.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

export const fmt = { int, ms, ratio };

/**
 * Replaces the section `## <label>` of the results file (up to the next `## `), or adds it
 * at the end; whatever else the file says (other runs, notes) stays as it is.
 */
export function writeSection(path, label, body, intro) {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : `${intro.trim()}\n`;
  const heading = `## ${label}`;
  const section = `${heading}\n\n${body.trim()}\n`;
  const start = text.split('\n').findIndex((line) => line === heading);
  let out;
  if (start < 0) {
    out = `${text.trimEnd()}\n\n${section}`;
  } else {
    const lines = text.split('\n');
    let end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
    if (end < 0) end = lines.length;
    out = [...lines.slice(0, start), ...section.split('\n'), ...lines.slice(end)].join('\n');
  }
  writeFileSync(path, `${out.trimEnd()}\n`);
}

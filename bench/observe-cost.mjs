// What one observation of a request's duration costs: prom-client's histogram child against
// the service's hand-counted series (src/common/metrics/request-durations.ts), in the same
// process, rounds interleaved; nanoseconds per call, the median of the rounds.
//
//   npm run build && node bench/observe-cost.mjs
import { Histogram, Registry } from 'prom-client';

import { RequestDurations } from '../dist/src/common/metrics/request-durations.js';
import { median } from './lib/report.mjs';

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CALLS = Number(process.env.BENCH_CALLS ?? 2_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const theirs = new Histogram({
  name: 'd',
  help: 'd',
  labelNames: ['method', 'route', 'status_class'],
  buckets: BOUNDS,
  registers: [new Registry()],
}).labels('GET', 'unmatched', '4xx');
const ours = new RequestDurations('d', 'd', BOUNDS, new Registry()).labels('GET', 'unmatched', '4xx');

/** Nanoseconds per call of `observe`, over durations spread across the buckets. */
function perCall(series) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) series.observe((i % 1000) / 50_000);
  return Number(process.hrtime.bigint() - start) / CALLS;
}

const rounds = { 'prom-client': [], 'by hand': [] };
for (let round = 0; round < ROUNDS; round++) {
  rounds['prom-client'].push(perCall(theirs));
  rounds['by hand'].push(perCall(ours));
}
for (const [name, values] of Object.entries(rounds))
  console.log(
    `${name.padEnd(12)} ${median(values).toFixed(1)} ns per observation (rounds: ${values.map((v) => v.toFixed(0)).join(', ')})`,
  );

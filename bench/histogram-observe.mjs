// `node bench/histogram-observe.mjs` (after `npm run build`): the cost of one observation
// in the request duration histogram, this service's series against prom-client's Histogram
// (a child made once by labels(), as the response hook would hold it), with the service's
// buckets. Rounds alternate the two; the figure is the median round.
import { Histogram, Registry } from 'prom-client';

import { RequestDurations } from '../dist/src/common/metrics/request-durations.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const N = 2_000_000;
const ROUNDS = 7;
const durations = Array.from({ length: 1024 }, (_, i) => (i % 97) / 5000);

function nsPerObserve(observe) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) observe(durations[i & 1023]);
  return Number(process.hrtime.bigint() - started) / N;
}

const ours = new RequestDurations('d', 'd', BUCKETS, new Registry()).labels('GET', '/planets', '2xx');
const theirs = new Histogram({
  name: 'd',
  help: 'd',
  labelNames: ['method', 'route', 'status_class'],
  buckets: BUCKETS,
  registers: [new Registry()],
}).labels('GET', '/planets', '2xx');
const runs = { 'this service': [], 'prom-client': [] };
for (let round = 0; round < ROUNDS; round++) {
  runs['this service'].push(nsPerObserve((seconds) => ours.observe(seconds)));
  runs['prom-client'].push(nsPerObserve((seconds) => theirs.observe(seconds)));
}
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
for (const [name, values] of Object.entries(runs)) console.log(`${name}: ${median(values).toFixed(0)} ns/observe`);

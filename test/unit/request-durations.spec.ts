import { Histogram, Registry } from 'prom-client';

import { RequestDurations } from '../../src/common/metrics/request-durations';

const NAME = 'http_server_request_duration_seconds';
const HELP = 'Time from a request received to its response sent.';
const BOUNDS = [0.001, 0.005, 0.025, 0.1, 1];

/** Durations on and between the bounds, past the last one, and zero. */
const OBSERVED: [method: string, route: string, statusClass: string, seconds: number][] = [
  ['GET', '/planets', '2xx', 0],
  ['GET', '/planets', '2xx', 0.001],
  ['GET', '/planets', '2xx', 0.0010001],
  ['GET', '/planets', '2xx', 0.3],
  ['GET', '/planets', '4xx', 1],
  ['GET', '/planets', '4xx', 7.5],
  ['POST', 'unmatched', '4xx', 0.02],
  ['POST', 'unmatched', '4xx', 0.02],
];

/** The exposition's lines, in order within each series; series sorted, as order between them means nothing. */
function seriesOf(text: string): string[] {
  const bySeries = new Map<string, string[]>();
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
    const series = line
      .replace(/(_bucket|_sum|_count)?\{/, '{')
      .replace(/,?le="[^"]*"/, '')
      .replace(/ \S+$/, '');
    bySeries.set(series, [...(bySeries.get(series) ?? []), line]);
  }
  return [...bySeries.keys()].sort().flatMap((series) => bySeries.get(series) ?? []);
}

describe('the request duration histogram counted by hand', () => {
  let ours: Registry;
  let durations: RequestDurations;
  let theirs: Registry;
  let histogram: Histogram<'method' | 'route' | 'status_class'>;

  beforeEach(() => {
    ours = new Registry();
    durations = new RequestDurations(NAME, HELP, BOUNDS, ours);
    theirs = new Registry();
    histogram = new Histogram({
      name: NAME,
      help: HELP,
      labelNames: ['method', 'route', 'status_class'],
      buckets: BOUNDS,
      registers: [theirs],
    });
  });

  it("exposes what prom-client's histogram exposes for the same durations", async () => {
    for (const [method, route, statusClass, seconds] of OBSERVED) {
      durations.labels(method, route, statusClass).observe(seconds);
      histogram.labels(method, route, statusClass).observe(seconds);
    }
    const text = await ours.metrics();
    expect(text).toContain(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`);
    expect(text).toContain(`${NAME}_bucket{le="+Inf",method="GET",route="/planets",status_class="4xx"} 2`);
    expect(seriesOf(text)).toEqual(seriesOf(await theirs.metrics()));
    // prom-client's own gives each bucket `exemplar: null` (exemplars are off); nothing else differs.
    const withoutExemplars = (json: unknown) =>
      JSON.parse(JSON.stringify(json, (key, value: unknown) => (key === 'exemplar' ? undefined : value))) as unknown;
    expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
  });

  it('shows a series only once it has counted, as prom-client does, and again none after a reset', async () => {
    const series = durations.labels('GET', '/planets', '5xx');
    expect(await ours.metrics()).not.toContain('_bucket');
    series.observe(0.002);
    expect(durations.labels('GET', '/planets', '5xx')).toBe(series);
    expect(await ours.metrics()).toContain(`${NAME}_count{method="GET",route="/planets",status_class="5xx"} 1`);
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('_bucket');
  });

  it('ignores a duration that is not a finite number instead of throwing in a response hook', async () => {
    const series = durations.labels('GET', '/planets', '2xx');
    for (const seconds of [Number.NaN, Number.POSITIVE_INFINITY]) expect(() => series.observe(seconds)).not.toThrow();
    series.observe(0.5);
    expect(await ours.metrics()).toContain(`${NAME}_sum{method="GET",route="/planets",status_class="2xx"} 0.5`);
  });
});

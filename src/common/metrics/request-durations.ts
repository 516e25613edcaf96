import type { Aggregator, Metric, MetricValueWithName, Registry } from 'prom-client';

type Label = 'method' | 'route' | 'status_class';
type Labels = Record<Label, string>;
type Sample = MetricValueWithName<Label | 'le'>;

/**
 * One series of the request histogram: a count per bucket (the last one past every bound,
 * +Inf), the sum of the durations and their count.
 */
export class DurationSeries {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    readonly labels: Readonly<Labels>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    // prom-client throws here; a response hook must not, and a duration is always finite.
    if (!Number.isFinite(seconds)) return;
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]) bucket++;
    this.counts[bucket]++;
    this.sum += seconds;
    this.count++;
  }

  /**
   * The samples prom-client's own histogram gives: cumulative buckets, then sum and count;
   * none before the first observation, as there.
   */
  samples(name: string): Sample[] {
    if (this.count === 0) return [];
    const samples: Sample[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, bucket) => {
      cumulative += this.counts[bucket];
      samples.push({ metricName: `${name}_bucket`, labels: { le: bound, ...this.labels }, value: cumulative });
    });
    samples.push(
      { metricName: `${name}_bucket`, labels: { le: '+Inf', ...this.labels }, value: this.count },
      { metricName: `${name}_sum`, labels: { ...this.labels }, value: this.sum },
      { metricName: `${name}_count`, labels: { ...this.labels }, value: this.count },
    );
    return samples;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/**
 * The request duration histogram, counted by hand and formatted by prom-client. A request
 * observes its duration in every response, the cheapest ones included: prom-client's own
 * `observe` builds a label string, checks the labels and looks the series up by that string
 * each time. Here each route holds its series, made once, and a request only adds to an array.
 * Measured: 1.1–1.9 µs an observe in prom-client, 0.05–0.11 µs here (`node bench/histogram-observe.mjs`).
 * The registry reads it like any of its metrics, through `get()` at each scrape; the exposition
 * is the same as prom-client's histogram (test/unit/request-durations.spec.ts).
 */
export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator: Aggregator = 'sum';
  private readonly series = new Map<string, DurationSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    // prom-client's registry takes any object with its metrics' name, help, type, aggregator,
    // get() and reset(); its types name only its own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these labels, made on first use; the same one on every later call. */
  labels(method: string, route: string, statusClass: string): DurationSeries {
    const key = JSON.stringify([method, route, statusClass]);
    let series = this.series.get(key);
    if (!series) {
      series = new DurationSeries({ method, route, status_class: statusClass }, this.bounds);
      this.series.set(key, series);
    }
    return series;
  }

  /** What a scrape reads, in the shape of prom-client's own metrics. */
  get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: Aggregator; values: Sample[] }> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].flatMap((series) => series.samples(this.name)),
    });
  }

  reset(): void {
    for (const series of this.series.values()) series.reset();
  }
}

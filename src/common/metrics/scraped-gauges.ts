import { Gauge, type Registry } from 'prom-client';

/**
 * Gauges a feature reads at each scrape (a count in its tables, say), without depending on a
 * metrics library. Names get the service's prefix. With metrics off, nothing is registered
 * and nothing is ever read.
 */
export abstract class ScrapedGauges {
  abstract register(name: string, help: string, read: () => Promise<number>): void;
}

export class NoScrapedGauges extends ScrapedGauges {
  register(): void {}
}

export class PrometheusScrapedGauges extends ScrapedGauges {
  constructor(
    private readonly registry: Registry,
    private readonly prefix: string,
  ) {
    super();
  }

  register(name: string, help: string, read: () => Promise<number>): void {
    new Gauge({
      name: this.prefix + name,
      help,
      registers: [this.registry],
      async collect() {
        // A failed read (the database away) must not fail the whole scrape: the series shows
        // NaN, which no threshold alert takes for a value, while the database's own alerts fire.
        this.set(await read().catch(() => Number.NaN));
      },
    });
  }
}

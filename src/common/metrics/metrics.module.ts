import { DynamicModule, Global, INestApplicationContext, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { AppConfig } from '../../config/app-config';
import { MetricsServer } from './metrics-server';
import { buildInfo, PREFIX, PrometheusMetrics } from './prometheus-metrics';
import { type RequestMetricsHooks, requestMetricsHooks } from './request-metrics';
import { NoScrapedGauges, PrometheusScrapedGauges, ScrapedGauges } from './scraped-gauges';
import { NoSecurityCounters, SecurityCounters } from './security-counters';

/**
 * Prometheus metrics (METRICS_PORT; 0 turns them off, and then nothing is counted or
 * served). Global, so that any feature can count its events through SecurityCounters, and
 * offer gauges read at each scrape through ScrapedGauges.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (config.METRICS_PORT === 0) return MetricsModule.off();
    return {
      module: MetricsModule,
      providers: [
        {
          provide: PrometheusMetrics,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) =>
            new PrometheusMetrics(dataSource, buildInfo(config.GIT_COMMIT, config.API_ENVIRONMENT)),
        },
        { provide: SecurityCounters, useExisting: PrometheusMetrics },
        {
          provide: ScrapedGauges,
          inject: [PrometheusMetrics],
          useFactory: (metrics: PrometheusMetrics) => new PrometheusScrapedGauges(metrics.registry, PREFIX),
        },
        {
          provide: MetricsServer,
          inject: [PrometheusMetrics],
          useFactory: (metrics: PrometheusMetrics) =>
            new MetricsServer(metrics.registry, config.METRICS_PORT, config.METRICS_HOST ?? config.HOST),
        },
      ],
      exports: [SecurityCounters, ScrapedGauges],
    };
  }

  /** Counts nothing and serves nothing: METRICS_PORT=0, and the operator CLI. */
  static off(): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        { provide: SecurityCounters, useClass: NoSecurityCounters },
        { provide: ScrapedGauges, useClass: NoScrapedGauges },
      ],
      exports: [SecurityCounters, ScrapedGauges],
    };
  }
}

/** The hooks that count and time requests when metrics are on; undefined when off. */
export function requestMetricsOf(app: INestApplicationContext): RequestMetricsHooks | undefined {
  const counters = app.get(SecurityCounters, { strict: false });
  return counters instanceof PrometheusMetrics ? requestMetricsHooks(counters) : undefined;
}

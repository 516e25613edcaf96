import { DynamicModule, Global, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';

import { AppConfig } from '../../config/app-config';
import { MetricsServer } from './metrics-server';
import { buildInfo, PREFIX, PrometheusMetrics } from './prometheus-metrics';
import { registerRequestMetrics } from './request-metrics';
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

/** Request counts and durations, when metrics are on. Called by createApp before the routes are registered. */
export function registerHttpMetrics(app: NestFastifyApplication): void {
  const counters = app.get(SecurityCounters, { strict: false });
  if (counters instanceof PrometheusMetrics) registerRequestMetrics(app.getHttpAdapter().getInstance(), counters);
}

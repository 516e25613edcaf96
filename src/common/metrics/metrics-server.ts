import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Registry } from 'prom-client';

const NOT_FOUND = 'Not found. This port serves GET /metrics only.\n';

/**
 * GET /metrics on a listener of its own (METRICS_PORT), never on the public port: what the
 * service counts is for its operators. It opens with the application and closes with it.
 */
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private readonly server: Server;

  constructor(
    private readonly registry: Registry,
    private readonly port: number,
    private readonly host: string,
  ) {
    this.server = createServer((req, res) => this.serve(req, res));
    // A scraper has no business sending a large or slow request.
    this.server.requestTimeout = 10_000;
    this.server.headersTimeout = 10_000;
  }

  /** Where it listens (the port chosen by the system when asked for any). */
  address(): AddressInfo {
    return this.server.address() as AddressInfo;
  }

  async onApplicationBootstrap(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    }).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`Metrics listener on ${this.host}:${this.port} (METRICS_PORT, METRICS_HOST): ${err.message}`);
    });
    this.logger.log(`Metrics on http://${this.host}:${this.address().port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url?.split('?', 1)[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(NOT_FOUND);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Only GET and HEAD.\n');
      return;
    }
    this.registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': this.registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        this.logger.error(`Collecting metrics failed: ${err instanceof Error ? err.message : String(err)}`);
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Collecting metrics failed.\n');
      },
    );
  }
}

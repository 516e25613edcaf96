import { connect, createServer, Server, Socket } from 'node:net';

/**
 * - forward: bytes pass both ways.
 * - refuse: nothing listens (new connections are refused, ECONNREFUSED), and every open
 *   connection is reset (RST), as when the server's host goes away.
 * - silent: connections are accepted and stay open, but every byte is dropped both ways,
 *   as when packets are lost on the way and nobody says so. Connections that were opened
 *   in silence never reached the server; they are reset once forwarding starts again.
 * - full (PostgreSQL only): open connections keep forwarding, and each new one is answered
 *   as a server whose max_connections are spent: FATAL 53300 "too many clients", then closed.
 */
export type ProxyMode = 'forward' | 'refuse' | 'silent' | 'full';

/** PostgreSQL's ErrorResponse for a connection it has no slot for. */
function tooManyClients(): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C53300', 'Msorry, too many clients already'].map((f) => Buffer.from(`${f}\0`));
  const body = Buffer.concat([...fields, Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

interface Link {
  client: Socket;
  upstream?: Socket;
}

/**
 * A TCP proxy on 127.0.0.1 between the service and a server (PostgreSQL, Redis) that a
 * test switches between forwarding and failing, to see what the service answers when its
 * database or Redis fails, and that it recovers without a restart.
 */
export class FaultProxy {
  private mode: ProxyMode = 'forward';
  private readonly links = new Set<Link>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(target: { host: string; port: number }): Promise<FaultProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new FaultProxy(server, (server.address() as { port: number }).port, target);
  }

  /** A proxy in front of the server a postgres:// or redis:// URL names. */
  static forUrl(url: string): Promise<FaultProxy> {
    const target = new URL(url);
    const defaultPort = target.protocol === 'redis:' || target.protocol === 'rediss:' ? 6379 : 5432;
    return FaultProxy.start({ host: target.hostname, port: Number(target.port || defaultPort) });
  }

  /** `url` with its host and port replaced by this proxy's. */
  rewrite(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    return proxied.toString();
  }

  async setMode(mode: ProxyMode): Promise<void> {
    const previous = this.mode;
    this.mode = mode;
    if (mode === 'refuse') {
      for (const link of this.links) this.reset(link);
      if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
    } else if (previous === 'refuse') {
      await new Promise<void>((resolve, reject) => {
        this.server.once('error', reject);
        this.server.listen(this.port, '127.0.0.1', () => resolve());
      });
    }
    if (mode === 'forward' && previous === 'silent') {
      for (const link of this.links) if (!link.upstream) this.reset(link);
    }
  }

  /** Whether open connections pass bytes. */
  private get forwarding(): boolean {
    return this.mode === 'forward' || this.mode === 'full';
  }

  /** Open connections through the proxy. */
  get connections(): number {
    return this.links.size;
  }

  async close(): Promise<void> {
    for (const link of this.links) this.reset(link);
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const link: Link = { client };
    this.links.add(link);
    const drop = () => {
      this.links.delete(link);
      client.destroy();
      link.upstream?.destroy();
    };
    client.on('error', drop).on('close', drop);
    client.on('data', (bytes) => {
      if (this.forwarding) link.upstream?.write(bytes);
    });
    if (this.mode === 'silent') return;
    if (this.mode === 'full') {
      // After the client's startup message, as the server answers it.
      client.once('data', () => client.end(tooManyClients()));
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    link.upstream = upstream;
    upstream.on('error', drop).on('close', drop);
    // Writes before the upstream connection is open are queued by the socket.
    upstream.on('data', (bytes) => {
      if (this.forwarding) client.write(bytes);
    });
  }

  private reset(link: Link): void {
    this.links.delete(link);
    link.client.resetAndDestroy();
    link.upstream?.resetAndDestroy();
  }
}

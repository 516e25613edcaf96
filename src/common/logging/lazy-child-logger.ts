import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/** pino's line arguments: an object or a message, then a message or format arguments. */
type LogArgs = [obj: unknown, msg?: string, ...args: unknown[]];
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * A request's logger (`request.log`), made only when something logs through it. Fastify gives
 * every request a child of the root logger, and making one runs the root's redaction over the
 * child's bindings: its wildcard paths (`*.password`, ...) apply to every key, the request id
 * included, which makes a child a noticeable part of the cost of a 404. Most requests never log through
 * theirs: the request line has a logger of its own (OneLinePerRequest). Lines that do come
 * through here are the child's, redaction and request id included.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** Fastify's childLoggerFactory: the same arguments as `logger.child`. */
  static factory(this: void, logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    return new LazyChildLogger(logger, bindings, options);
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }

  error(...args: LogArgs): void {
    this.write('error', args);
  }

  warn(...args: LogArgs): void {
    this.write('warn', args);
  }

  info(...args: LogArgs): void {
    this.write('info', args);
  }

  debug(...args: LogArgs): void {
    this.write('debug', args);
  }

  trace(...args: LogArgs): void {
    this.write('trace', args);
  }

  silent(...args: LogArgs): void {
    this.write('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  private write(level: Level, args: LogArgs): void {
    this.logger[level](...args);
  }
}

import { LoggerService } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { DestinationStream, Logger } from 'pino';

import type { LogFormat, LogLevel } from '../../config/app-config';
import { pathOf } from '../http/location';
import { isoTimeBySecond } from './iso-time';
import { LinesPerTurn } from './lines-per-turn';
import { scrubKeys } from './scrub';

/**
 * Paths pino blanks out wherever they appear in a log object. Secrets must not reach
 * logs even when someone logs a whole request or body by mistake.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.key',
  '*.token',
  '*.secret',
  'password',
  'key',
  'token',
];

export interface RootLoggerOptions {
  level: LogLevel;
  /** `auto`: human-readable when in development on a terminal, JSON lines otherwise. */
  format?: LogFormat;
  development?: boolean;
  /** Where lines go (stdout when absent); tests pass a stream to read them. */
  destination?: DestinationStream;
}

export function createRootLogger({
  level,
  format = 'json',
  development = false,
  destination,
}: RootLoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: undefined,
    timestamp: isoTimeBySecond(),
    serializers: {
      err: errorWithoutValues,
      req: requestFields,
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
  const pretty =
    format === 'pretty' || (format === 'auto' && development && destination === undefined && process.stdout.isTTY);
  return pino(options, (pretty && prettyStream(destination)) || destination || standardOutput());
}

let warningsTo: Logger | undefined;

/**
 * Node's process warnings (a deprecation, a library's notice) as warning lines of `logger`:
 * the server runs with --no-warnings, so that none is printed as plain text into the log stream.
 */
export function logProcessWarnings(logger: Logger): void {
  if (!warningsTo) process.on('warning', (warning) => warningsTo?.warn({ warning: warning.name }, warning.message));
  warningsTo = logger;
}

/** What a line says of a request. Only the path: a query string may carry something secret a client put there. */
function requestFields(req: { method: string; url: string; ip?: string }) {
  return { method: req.method, path: scrubKeys(pathOf(req.url)), remoteAddress: req.ip };
}

let stdout: LinesPerTurn | undefined;

/** The one LinesPerTurn of the process's standard output, made when first asked for. */
function standardOutput(): LinesPerTurn {
  return (stdout ??= new LinesPerTurn());
}

/**
 * pino-pretty is a devDependency: a production install (npm ci --omit=dev) has none, and
 * then logs stay JSON lines. Loaded only here, when asked for; synchronous, as a developer's
 * terminal has no throughput to protect.
 */
function prettyStream(destination?: DestinationStream): DestinationStream | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as (options: object) => DestinationStream;
    return pretty({
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      ...(destination ? { destination, colorize: false } : {}),
    });
  } catch {
    return undefined;
  }
}

/**
 * pino's error serializer, minus the values a failed query carries: TypeORM puts the SQL
 * parameters on its QueryFailedError (emails, hashes, names), and PostgreSQL's `detail`
 * quotes the conflicting row ("Key (email)=(…) already exists"). The SQL text, the code and
 * the message stay, which is what a person debugging needs.
 */
export function errorWithoutValues(err: Error): Record<string, unknown> {
  const serialized = pino.stdSerializers.err(err) as unknown as Record<string, unknown>;
  return stripValues(serialized, 0);
}

const VALUE_FIELDS = new Set(['parameters', 'detail', 'where', 'internalQuery']);

function stripValues(value: Record<string, unknown>, depth: number): Record<string, unknown> {
  const clean: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (VALUE_FIELDS.has(name)) continue;
    clean[name] =
      depth < 3 && field !== null && typeof field === 'object' && !Array.isArray(field)
        ? stripValues(field as Record<string, unknown>, depth + 1)
        : field;
  }
  return clean;
}

const LEVELS = pino.levels.values as Record<'debug' | 'info' | 'warn' | 'error', number>;

/**
 * One log line per request, when it ends: Fastify's default adds a second line when the
 * request arrives, which doubles the volume and says nothing the last line does not. The
 * line carries the request id, method, path, status and response time in milliseconds; a
 * response that failed on the wire is logged as an error, through the request's own logger.
 *
 * The line of a completed request is written here, not by pino's log method, to the
 * root logger's destination and with its timestamp: the same bytes as
 * `info({ requestId, req, res, responseTime }, 'request completed')` on a child of the root
 * logger without redaction, through the serializers above (test/unit/logger.spec.ts
 * compares them). pino walks the object's keys, looks each one up among its serializers and
 * escapes every string itself: a large part of what the line costs on a 404, where `info` has
 * a CPU budget against `warn` (docs/performance.md). Its fields are the ones `requestFields`
 * builds and an id that requestIdOf has already checked, so there is nothing to redact.
 */
export class OneLinePerRequest extends LogController {
  private readonly destination: { write(line: string): unknown };
  private readonly time: () => string;

  constructor(private readonly root: Logger) {
    super({ requestIdLogLabel: 'requestId' });
    this.destination = (root as unknown as Record<symbol, { write(line: string): unknown }>)[pino.symbols.streamSym];
    this.time = (root as unknown as Record<symbol, () => string>)[pino.symbols.timeSym];
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const responseTime = Math.round(reply.elapsedTime * 10) / 10;
    if (error) {
      reply.log.error({ req: request, res: reply, responseTime, err: error }, 'request errored');
      return;
    }
    const status = reply.statusCode;
    // Health probes come every few seconds from every orchestrator and load balancer: at
    // info they would drown the lines people read. A failing probe is a warning. The
    // address is looked at first: the route's options are an object Fastify builds anew
    // at each read.
    const probe = request.url.startsWith('/health') && request.routeOptions.url?.startsWith('/health');
    let level: number;
    if (probe) level = status < 500 ? LEVELS.debug : LEVELS.warn;
    else level = status >= 500 ? LEVELS.error : LEVELS.info;
    if (level < this.root.levelVal) return;
    this.destination.write(
      `{"level":${level}${this.time()},"requestId":${JSON.stringify(request.id)},"req":${JSON.stringify(requestFields(request))},"res":{"statusCode":${status}},"responseTime":${Number.isFinite(responseTime) ? responseTime : null},"msg":"request completed"}\n`,
    );
  }
}

/** Lets Nest's own Logger calls go to the same pino logger as the HTTP logs. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]) {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.write('fatal', message, rest);
  }

  private write(asked: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, rest: unknown[]) {
    // Nest passes the context last, and for errors a stack before it.
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    // Nest's report of the error that failed a start, which the caller (main, the CLI) reports
    // itself in one line: its stack is for LOG_LEVEL=debug, not for an operator's terminal.
    const level = context === 'ExceptionHandler' ? 'debug' : asked;
    const stack = level === 'error' && typeof rest[0] === 'string' && rest.length > 1 ? rest[0] : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ context, ...message });
    } else {
      this.logger[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}

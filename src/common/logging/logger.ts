import { LoggerService } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { DestinationStream, Logger } from 'pino';
import type { LogLevel } from '../../config/app-config';

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

export function createRootLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: {
        err: pino.stdSerializers.err,
        // Only the path: a query string may carry something secret a client put there.
        req: (req: { method: string; url: string; id?: string; ip?: string }) => ({
          method: req.method,
          path: req.url.split('?')[0],
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
    destination,
  );
}

/**
 * One log line per request, when it ends: Fastify's default adds a second line when the
 * request arrives, which doubles the volume and says nothing the last line does not. The
 * line carries the request id (the child logger's binding), method, path, status and
 * response time in milliseconds; a response that failed on the wire is logged as an error.
 */
export class OneLinePerRequest extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
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

  private write(level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, rest: unknown[]) {
    // Nest passes the context last, and for errors a stack before it.
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
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

import { createHash } from 'node:crypto';

import type { DbStatementSerializer } from '@opentelemetry/instrumentation-ioredis';

// Orchestrators and balancers probe every few seconds: a trace each (with the readiness
// check's database and Redis calls) would outnumber the traces of real requests.
const PROBE_PATHS = new Set(['/health/live', '/health/ready', '/health']);

/** A request's path, without its query string (OpenTelemetry's `url.path`; the query is `url.query`). */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** Whether a request is a health probe, left untraced. */
export function isHealthProbe(url: string | undefined): boolean {
  return url !== undefined && PROBE_PATHS.has(pathOf(url));
}

/**
 * A Redis span's statement: the command alone. The rate-limit store's keys are hashes of
 * client addresses and emails, which a list of every IPv4 address undoes, and EVAL's first
 * argument is a whole Lua script; a script is named by its SHA-1 instead (what EVALSHA sends).
 */
export const redisStatement: DbStatementSerializer = (command, args) => {
  if (args.length === 0) return command;
  if (/^eval(_ro)?$/i.test(command)) return `${command} ${createHash('sha1').update(String(args[0])).digest('hex')}`;
  if (/^evalsha(_ro)?$/i.test(command)) return `${command} ${String(args[0])}`;
  return command;
};

import { isIPv6 } from 'node:net';

import type { FastifyRequest } from 'fastify';

const PORT = '(?::(?:[1-9]\\d{0,3}|[1-5]\\d{4}|6[0-4]\\d{3}|65[0-4]\\d{2}|655[0-2]\\d|6553[0-5]))?';
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const NAME_HOST = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?${PORT}$`);
const BRACKETED_HOST = new RegExp(`^\\[([0-9A-Fa-f:.]+)\\]${PORT}$`);

/**
 * A Host (or X-Forwarded-Host) value this service will write into a URI: a name or IPv4
 * address, or an IPv6 address in brackets, with an optional port. Nothing else: no user
 * info, path, spaces, zone ids or percent-encoding, so a client cannot make the service
 * send back an arbitrary string as part of a URI.
 */
export function isPlainHost(value: string | undefined): value is string {
  if (value === undefined || value.length === 0 || value.length > 261) return false;
  const bracketed = BRACKETED_HOST.exec(value);
  if (bracketed) return isIPv6(bracketed[1]);
  return NAME_HOST.test(value) && value.split(':')[0].length <= 254;
}

/** The path of a request target (`request.url`): all before its query string. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * The origin the client addressed: X-Forwarded-Proto and X-Forwarded-Host when the
 * connection comes from a trusted proxy (Fastify reads them only then, see trust-proxy.ts),
 * else the connection's scheme and the Host header. A forwarded value that is not a plain
 * scheme or host is ignored, as a malformed X-Forwarded-For entry is. An HTTP/1.0 request
 * may come without Host (HTTP/1.1 requires a valid one, see http-hooks.ts): then the
 * connection's own address, as RFC 9112 (section 3.3) reconstructs the target URI when no
 * name is configured. Undefined only when the connection has no address to take.
 */
export function requestOrigin(request: FastifyRequest): string | undefined {
  const host = [request.host, request.headers.host].find(isPlainHost) ?? localAuthority(request);
  if (host === undefined) return undefined;
  const forwarded = String(request.protocol ?? '').toLowerCase();
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : connectionScheme(request);
  return `${scheme}://${host.toLowerCase()}`;
}

function localAuthority(request: FastifyRequest): string | undefined {
  const { localAddress, localPort } = request.raw.socket ?? {};
  if (localAddress === undefined) return undefined;
  const authority = `${isIPv6(localAddress) ? `[${localAddress}]` : localAddress}:${localPort}`;
  return isPlainHost(authority) ? authority : undefined;
}

function connectionScheme(request: FastifyRequest): 'http' | 'https' {
  return (request.raw.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http';
}

/**
 * The absolute URI of `path` (which starts with a slash) on this deployment, for Location:
 * under `baseUrl` (PUBLIC_BASE_URL, or SANDBOX_BASE_URL on a sandbox) when configured, else
 * under the origin the request was addressed to (see requestOrigin). The path alone only
 * when neither can be known, which a request on a real connection never meets.
 */
export function absoluteUrl(request: FastifyRequest, baseUrl: string | undefined, path: string): string {
  return `${baseUrl ?? requestOrigin(request) ?? ''}${path}`;
}

/** The OpenAPI declaration of a 201's Location header. */
export const locationHeader = (description: string, examplePath: string) =>
  ({
    Location: {
      description,
      schema: { type: 'string', format: 'uri', example: `https://api.example.org${examplePath}` },
    },
  }) as const;

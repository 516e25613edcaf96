import { brotliDecompressSync, gunzipSync } from 'node:zlib';

import type { ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

import { problemSlugOf } from './problems';

interface ProblemExample {
  type: string;
  title: string;
  status: number;
}
interface MediaType {
  schema?: object;
  examples?: Record<string, { value?: ProblemExample }>;
}
interface Operation {
  responses: Record<
    string,
    { description?: string; headers?: Record<string, object>; content?: Record<string, MediaType> }
  >;
}

/**
 * Headers a client acts on, which an answer sends only where the document declares them, and
 * must send at the statuses listed: when to retry a 429 or 503, what a 304 confirms, and the
 * request id every answer carries.
 */
const SIGNAL_HEADERS: Record<string, number[]> = { 'retry-after': [429, 503], etag: [304], 'x-request-id': [] };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, { headers?: Record<string, object> }>; schemas?: object };
  'x-problem-types'?: ProblemExample[];
};

export interface CheckedResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  /** The bytes as sent; a compressed body is checked as it decompresses. */
  rawPayload?: Buffer;
}

/** The body as text, decompressed when it was sent with a content coding. */
function bodyText(response: CheckedResponse): string {
  const coding = response.headers['content-encoding'];
  if (coding === undefined || coding === 'identity' || !response.rawPayload) return response.body;
  if (coding === 'gzip') return gunzipSync(response.rawPayload).toString('utf8');
  if (coding === 'br') return brotliDecompressSync(response.rawPayload).toString('utf8');
  throw new Error(`unexpected Content-Encoding: ${String(coding)}`);
}

/** Routes that serve the documentation itself rather than the API it describes. */
const UNDOCUMENTED = /^\/docs(\/|-json|-yaml|$)/;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * Checks a response against the OpenAPI document: the operation exists (or the answer is
 * the 404 problem for an unknown route, or the 405 with an Allow that lists the documented
 * methods of a known path), the status is declared, the content type is one the operation
 * declares, and a JSON body matches the declared schema. A problem document must be one of
 * the examples the operation declares for its status (type, title and status), so that the
 * document lists every problem the service sends; answers made before any operation is
 * found (an unknown route, a malformed URL, a wrong method) must be registered types
 * (`x-problem-types`). HEAD is checked as its GET, without a body.
 */
export class OpenApiResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: { method: string; pattern: RegExp; template: string; operation: Operation }[] = [];
  private readonly registry: ProblemExample[];
  private readonly methodNotAllowed: { headers?: Record<string, object> } | undefined;

  /**
   * `signalHeaders: false` leaves Retry-After and ETag unchecked, for a document that declares
   * no response headers (the Galaxy's contract).
   */
  constructor(
    document: Document,
    private readonly options: { signalHeaders?: boolean } = {},
  ) {
    addFormats(this.ajv);
    // OpenAPI's own formats, which JSON Schema does not define.
    for (const format of ['binary', 'float', 'double', 'int32', 'int64']) this.ajv.addFormat(format, true);
    this.ajv.addSchema({ ...document, $id: 'openapi.json' });
    for (const [template, item] of Object.entries(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const [method, operation] of Object.entries(item)) {
        if (METHODS.includes(method)) this.routes.push({ method, pattern, template, operation });
      }
    }
    this.registry = document['x-problem-types'] ?? [];
    this.methodNotAllowed = document.components?.responses?.MethodNotAllowed;
  }

  /** Throws an Error describing every way the response departs from the document. */
  check(method: string, url: string, sent: CheckedResponse): void {
    const response = { ...sent, body: bodyText(sent) };
    const path = pathAsSent(url);
    if (UNDOCUMENTED.test(path)) return;
    const head = method.toLowerCase() === 'head';
    const route = this.routesAt(path).find((r) => r.method === (head ? 'get' : method.toLowerCase()));
    const where = `${method.toUpperCase()} ${path} → ${response.statusCode}`;
    // The router refuses a URL it cannot decode before it looks for a route.
    const malformedUrl =
      response.statusCode === 400 && problemSlugOf(this.problemBody(response)?.type) === 'bad-request';
    if (!route || malformedUrl) {
      if (response.statusCode === 405) this.checkAllow(where, path, response);
      else if (response.statusCode !== 404 && !malformedUrl)
        throw new Error(`${where}: no such operation in the OpenAPI document`);
      if (head) return;
      this.checkBody(where, 'Problem', { schema: { $ref: '#/components/schemas/Problem' } }, response);
      this.checkProblem(where, this.registry, response, 'registered problem types (x-problem-types)');
      return;
    }
    const declared = route.operation.responses[String(response.statusCode)] ?? route.operation.responses.default;
    if (!declared) {
      throw new Error(
        `${where}: status not declared for ${method.toUpperCase()} ${route.template} ` +
          `(declared: ${Object.keys(route.operation.responses).join(', ')})`,
      );
    }
    if (this.options.signalHeaders !== false) this.checkSignalHeaders(where, declared.headers ?? {}, response);
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    if (!declared.content || Object.keys(declared.content).length === 0) {
      if (response.body.length > 0) throw new Error(`${where}: a body was sent but the document declares none`);
      return;
    }
    const mediaType = Object.keys(declared.content).find(
      (m) => m === contentType || (m.endsWith('/*') && contentType.startsWith(m.slice(0, -1))),
    );
    if (!mediaType) {
      throw new Error(
        `${where}: content type "${contentType}" not declared (declared: ${Object.keys(declared.content).join(', ')})`,
      );
    }
    if (head) {
      if (response.body.length > 0) throw new Error(`${where}: a HEAD answer has a body`);
      return;
    }
    if (contentType.endsWith('json'))
      this.checkBody(
        where,
        `${route.template} ${method} ${response.statusCode} ${mediaType}`,
        declared.content[mediaType],
        response,
      );
    if (contentType === 'application/problem+json') {
      const examples = Object.values(declared.content[mediaType].examples ?? {}).flatMap((e) =>
        e.value ? [e.value] : [],
      );
      this.checkProblem(
        where,
        examples,
        response,
        `the examples of ${method.toUpperCase()} ${route.template} ${response.statusCode}`,
      );
    }
  }

  /** The problem document's type, title and status are one of `declared`'s (types compared by slug). */
  private checkProblem(where: string, declared: ProblemExample[], response: CheckedResponse, whose: string): void {
    const body = this.problemBody(response);
    if (!body) return;
    const slug = problemSlugOf(body.type);
    if (!slug) throw new Error(`${where}: problem type ${JSON.stringify(body.type)} is not a /problems/<slug> URI`);
    const same = (e: ProblemExample) =>
      problemSlugOf(e.type) === slug && e.title === body.title && e.status === body.status;
    if (!declared.some(same)) {
      const listed = declared.map((e) => `${problemSlugOf(e.type)} ${e.status} "${e.title}"`).join('; ') || 'none';
      throw new Error(`${where}: problem ${slug} ${body.status} "${body.title}" is not among ${whose} (${listed})`);
    }
  }

  /**
   * Retry-After and ETag are sent only where the response declares them, and always at the
   * statuses that need them (Retry-After on a 429 or 503, ETag on a 304), declared there too.
   */
  private checkSignalHeaders(where: string, declared: Record<string, object>, response: CheckedResponse): void {
    const names = new Set(Object.keys(declared).map((name) => name.toLowerCase()));
    for (const [name, statuses] of Object.entries(SIGNAL_HEADERS)) {
      const sent = response.headers[name] !== undefined;
      if (sent && !names.has(name)) throw new Error(`${where}: ${name} was sent, but the document does not declare it`);
      if (statuses.includes(response.statusCode) && !sent)
        throw new Error(`${where}: a ${response.statusCode} must send ${name}`);
      if (statuses.includes(response.statusCode) && !names.has(name))
        throw new Error(`${where}: the document does not declare ${name} on ${response.statusCode}`);
    }
  }

  /**
   * The operations at a concrete path: a template without parameters that is the path is the
   * only one there (/api-keys/current, not /api-keys/{id} too), as the server routes it.
   */
  private routesAt(path: string) {
    const literal = this.routes.filter((r) => r.template === path);
    return literal.length > 0 ? literal : this.routes.filter((r) => r.pattern.test(path));
  }

  /**
   * A 405 lists in Allow exactly the methods the document has for the path (HEAD with GET),
   * and the document declares it, as the component MethodNotAllowed with Allow.
   */
  private checkAllow(where: string, path: string, response: CheckedResponse): void {
    if (this.options.signalHeaders !== false && !this.methodNotAllowed?.headers?.Allow)
      throw new Error(`${where}: the document declares no 405 (components.responses.MethodNotAllowed, with Allow)`);
    const documented = this.routesAt(path).map((r) => r.method.toUpperCase());
    if (documented.length === 0) throw new Error(`${where}: a 405 for a path the document does not have`);
    if (documented.includes('GET')) documented.push('HEAD');
    const allow = String(response.headers.allow ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    if ([...allow].sort().join() !== [...documented].sort().join()) {
      throw new Error(
        `${where}: Allow is "${allow.join(', ')}", but the document has ${documented.join(', ')} for this path`,
      );
    }
  }

  private problemBody(response: CheckedResponse): ProblemExample | undefined {
    if (!String(response.headers['content-type'] ?? '').startsWith('application/problem+json')) return undefined;
    try {
      return JSON.parse(response.body) as ProblemExample;
    } catch {
      return undefined;
    }
  }

  private checkBody(where: string, cacheKey: string, media: { schema?: object }, response: CheckedResponse): void {
    if (!media.schema) return;
    let validate = this.compiled.get(cacheKey);
    if (!validate) {
      validate = this.ajv.compile(rebase(media.schema));
      this.compiled.set(cacheKey, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      throw new Error(`${where}: body is not JSON: ${response.body.slice(0, 200)}`);
    }
    if (!validate(body)) {
      throw new Error(
        `${where}: body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${response.body.slice(0, 500)}`,
      );
    }
  }
}

/** Local refs (#/components/...) point into the registered document. */
function rebase(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"openapi.json#/'));
}

/**
 * The path the server answers for. A client resolves `.` and `..` segments, also spelled
 * `%2e`, before it sends (RFC 3986, section 5.2.4; `inject` does it as fetch would), so
 * `/keys/./usage` reaches the server as `/keys/usage`.
 */
function pathAsSent(url: string): string {
  // A leading `//` would otherwise be read as a host, as the injector also avoids.
  return new URL(url.startsWith('//') ? `http://localhost${url}` : url, 'http://localhost').pathname;
}

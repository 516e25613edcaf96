import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

interface Operation {
  responses: Record<string, { description?: string; content?: Record<string, { schema?: object }> }>;
}
type Document = { paths: Record<string, Record<string, Operation>>; components?: object };

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

/**
 * Checks a response against the OpenAPI document: the operation exists (or the answer is
 * the 404 problem for an unknown route), the status is declared, the content type is one
 * the operation declares, and a JSON body matches the declared schema.
 */
export class OpenApiResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: { method: string; pattern: RegExp; template: string; operation: Operation }[] = [];

  constructor(document: Document) {
    addFormats(this.ajv);
    // OpenAPI's own formats, which JSON Schema does not define.
    for (const format of ['binary', 'float', 'double', 'int32', 'int64']) this.ajv.addFormat(format, true);
    this.ajv.addSchema({ ...document, $id: 'openapi.json' } as object);
    for (const [template, item] of Object.entries(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const [method, operation] of Object.entries(item)) {
        if (['get', 'put', 'post', 'delete', 'patch'].includes(method)) this.routes.push({ method, pattern, template, operation });
      }
    }
  }

  /** Throws an Error describing every way the response departs from the document. */
  check(method: string, url: string, sent: CheckedResponse): void {
    const response = { ...sent, body: bodyText(sent) };
    const path = url.split('?')[0];
    if (UNDOCUMENTED.test(path)) return;
    const route = this.routes.find((r) => r.method === method.toLowerCase() && r.pattern.test(path));
    const where = `${method.toUpperCase()} ${path} → ${response.statusCode}`;
    if (!route) {
      // No such operation: the right answer is the 404 problem, or the 400 problem for a URL
      // that cannot be decoded (the router refuses it before it looks for a route).
      const malformedUrl = response.statusCode === 400 && response.body.includes('"https://errors.example/bad-request"');
      if (response.statusCode !== 404 && !malformedUrl) throw new Error(`${where}: no such operation in the OpenAPI document`);
      this.checkBody(where, 'Problem', { schema: { $ref: '#/components/schemas/Problem' } }, response);
      return;
    }
    const declared = route.operation.responses[String(response.statusCode)] ?? route.operation.responses.default;
    if (!declared) {
      throw new Error(
        `${where}: status not declared for ${method.toUpperCase()} ${route.template} ` +
          `(declared: ${Object.keys(route.operation.responses).join(', ')})`,
      );
    }
    const contentType = String(response.headers['content-type'] ?? '').split(';')[0].trim();
    if (!declared.content || Object.keys(declared.content).length === 0) {
      if (response.body.length > 0) throw new Error(`${where}: a body was sent but the document declares none`);
      return;
    }
    const mediaType = Object.keys(declared.content).find((m) => m === contentType || (m.endsWith('/*') && contentType.startsWith(m.slice(0, -1))));
    if (!mediaType) {
      throw new Error(`${where}: content type "${contentType}" not declared (declared: ${Object.keys(declared.content).join(', ')})`);
    }
    if (contentType.endsWith('json')) this.checkBody(where, `${route.template} ${method} ${response.statusCode} ${mediaType}`, declared.content[mediaType], response);
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
      throw new Error(`${where}: body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${response.body.slice(0, 500)}`);
    }
  }
}

/** Local refs (#/components/...) point into the registered document. */
function rebase(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"openapi.json#/'));
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { InjectOptions, Response } from 'light-my-request';
import type { TestApp } from '../support/test-app';
import type { UserFixture } from '../support/users';

// Shared by the planets-* and celestial-* suites (not a suite itself).

export const fixture = (name: string): Buffer => readFileSync(join(process.cwd(), 'test', 'fixtures', name));

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export function expectProblem(res: Response, status: number, field?: string) {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = res.json();
  expect(body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), type: expect.stringMatching(/^https:\/\//) });
  if (field) expect(body.errors?.map((e: { field: string }) => e.field)).toContain(field);
  return body;
}

/** A multipart/form-data body built by hand, as a client would send it. */
export function multipart(parts: { name: string; filename?: string; type?: string; content: Buffer | string }[]) {
  const boundary = `----galaxy-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const headers = `Content-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(`--${boundary}\r\n${headers}`), Buffer.from(part.content), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Creates a planet over HTTP as `user`; returns the response body. */
export async function createPlanet(t: TestApp, user: UserFixture, body: Record<string, unknown> = {}) {
  const res = await t.request({ method: 'POST', url: '/planets', headers: { authorization: user.basic }, payload: { name: 'Mars', ...body } });
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

export async function createSatellite(t: TestApp, user: UserFixture, planetId: number, body: Record<string, unknown> = {}) {
  const res = await t.request({
    method: 'POST',
    url: '/celestial-bodies',
    headers: { authorization: user.bearer },
    payload: { name: 'Phobos', type: 'moon', orbit: { planet: { id: planetId } }, ...body },
  });
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

const TEMPLATES: [RegExp, string][] = [
  [/^\/planets$/, '/planets'],
  [/^\/planets\/[^/]+$/, '/planets/{planetId}'],
  [/^\/planets\/[^/]+\/image$/, '/planets/{planetId}/image'],
  [/^\/celestial-bodies$/, '/celestial-bodies'],
];
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks each response against the OpenAPI document the app serves: its status must be
 * declared for the operation, and a JSON body must match the declared schema. Wraps
 * `t.request`, so every call a suite makes is checked.
 */
export async function checkedAgainstDocs(t: TestApp): Promise<(options: InjectOptions) => Promise<Response>> {
  const doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const format of ['float', 'int64', 'binary']) ajv.addFormat(format, true);
  ajv.addSchema(doc, 'doc.json');
  return async (options) => {
    const res = await t.request(options);
    const path = String(options.url).split('?')[0];
    const template = TEMPLATES.find(([re]) => re.test(path))?.[1];
    const method = String(options.method ?? 'GET').toLowerCase();
    const operation = template && doc.paths[template]?.[method];
    if (!operation) return res;
    const responses = operation.responses as Record<string, { content?: Record<string, unknown> }>;
    expect({ [`${method} ${template}`]: Object.keys(responses) }).toEqual({ [`${method} ${template}`]: expect.arrayContaining([String(res.statusCode)]) });
    const mediaType = String(res.headers['content-type'] ?? '').split(';')[0];
    if (!mediaType.endsWith('json')) return res;
    expect(Object.keys(responses[String(res.statusCode)].content ?? {})).toContain(mediaType);
    const validate = ajv.getSchema(`doc.json#/${pointer('paths', template, method, 'responses', String(res.statusCode), 'content', mediaType, 'schema')}`);
    if (!validate) throw new Error(`no schema for ${method} ${template} ${res.statusCode} ${mediaType}`);
    const valid = validate(res.json());
    expect({ body: res.json(), errors: valid ? null : validate.errors }).toMatchObject({ errors: null });
    return res;
  };
}

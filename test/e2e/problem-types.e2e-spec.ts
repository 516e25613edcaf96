import { readFileSync } from 'node:fs';

import { allProblemTypes } from '../../src/common/problem/problem-types';
import { expectProblem, problemSlugOf } from '../support/problems';
import { startTestApp, TestApp } from '../support/test-app';

const BASE_URL = 'https://api.example.org';
const ORIGIN = 'https://app.example.org';

let t: TestApp;
/** Deployed with a public base URL and CORS, as behind a load balancer. */
let public_: TestApp;

beforeAll(async () => {
  [t, public_] = await Promise.all([startTestApp(), startTestApp({ PUBLIC_BASE_URL: BASE_URL, CORS_ORIGINS: ORIGIN })]);
});
afterAll(async () => {
  await Promise.all([t?.close(), public_?.close()]);
});

type Example = { type: string; title: string; status: number; detail: string };

/** Every problem example in a document, with where it is. */
function problemExamples(document: any): { where: string; name: string; value: Example }[] {
  const found: { where: string; name: string; value: Example }[] = [];
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        const media = response.content?.['application/problem+json'];
        if (!media) continue;
        expect({ where: `${method} ${path} ${status}`, example: media.example }).toEqual({
          where: `${method} ${path} ${status}`,
          example: undefined,
        });
        for (const [name, example] of Object.entries<any>(media.examples ?? {}))
          found.push({ where: `${method} ${path} ${status}`, name, value: example.value });
        expect({
          where: `${method} ${path} ${status}`,
          examples: Object.keys(media.examples ?? {}).length > 0,
        }).toEqual({ where: `${method} ${path} ${status}`, examples: true });
      }
    }
  }
  return found;
}

describe('the registry and the OpenAPI document', () => {
  const committed = JSON.parse(readFileSync('openapi.json', 'utf8'));

  it('lists every registered problem type in x-problem-types with its title and status, and nothing else', () => {
    const registry = allProblemTypes().map((p) => ({ type: `/problems/${p.slug}`, title: p.title, status: p.status }));
    expect(committed['x-problem-types']).toEqual(registry);
    // The service's own generic types and every feature's are there.
    const slugs = registry.map((p) => problemSlugOf(p.type));
    for (const slug of [
      'bad-request',
      'validation',
      'malformed-json',
      'not-found',
      'method-not-allowed',
      'request-timeout',
      'precondition-failed',
      'internal',
      'last-api-key',
      'email-taken',
      'image-too-large',
    ]) {
      expect(slugs).toContain(slug);
    }
  });

  it('has only registered problem documents as examples, each named after its type, with realistic details', () => {
    const bySlug = new Map(allProblemTypes().map((p) => [p.slug, p]));
    const examples = problemExamples(committed);
    expect(examples.length).toBeGreaterThan(50);
    for (const { where, name, value } of examples) {
      const slug = problemSlugOf(value.type);
      const registered = slug === undefined ? undefined : bySlug.get(slug);
      expect({ where, name, value }).toEqual({
        where,
        name: slug,
        value: expect.objectContaining({
          type: `/problems/${slug}`,
          title: registered?.title,
          status: registered?.status,
          detail: expect.any(String),
        }),
      });
      expect(value.detail.length).toBeGreaterThan(10);
    }
  });

  it('declares a response status only with examples of that status', () => {
    for (const { where, value } of problemExamples(committed)) expect(where.endsWith(` ${value.status}`)).toBe(true);
  });

  it("lists each status's types together where an operation can send several", () => {
    const statusOf = (path: string, method: string, status: string) =>
      Object.keys(committed.paths[path][method].responses[status].content['application/problem+json'].examples).sort();
    expect(statusOf('/auth/region/api-keys', 'post', '400')).toEqual(['malformed-json', 'validation']);
    expect(statusOf('/auth/region/api-keys/{id}/roll', 'post', '409')).toEqual([
      'api-key-already-rolled',
      'api-key-limit',
      'idempotent-answer-lost',
      'idempotent-request-in-progress',
      'last-api-key',
    ]);
    expect(statusOf('/auth/regions/me', 'get', '403')).toEqual(['address-not-allowed', 'insufficient-permission']);
  });

  it('makes the example types absolute when the deployment has a public base URL, as the service sends them', async () => {
    const served = (await public_.request({ method: 'GET', url: '/docs-json' })).json();
    expect(served['x-problem-types'][0].type).toMatch(new RegExp(`^${BASE_URL}/problems/`));
    for (const { value } of problemExamples(served)) expect(value.type.startsWith(`${BASE_URL}/problems/`)).toBe(true);
    // Building that document changed nothing the other app serves.
    expect((await t.request({ method: 'GET', url: '/docs-json' })).json()).toEqual(committed);
  });
});

describe('problem type pages', () => {
  it.each(allProblemTypes().map((p) => [p.slug, p] as const))(
    'serves /problems/%s: its title, status, meaning and what to do',
    async (slug, type) => {
      const res = await t.request({ method: 'GET', url: `/problems/${slug}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=86400');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      );
      expect(res.body).toMatch(/^<!doctype html>/);
      const text = res.body
        .replace(/<[^>]+>/g, '')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&');
      expect(text).toContain(type.title);
      expect(text).toContain(String(type.status));
      expect(text).toContain(`/problems/${slug}`);
      expect(text).toContain(type.meaning.replace(/`/g, ''));
      expect(text).toContain(type.action.replace(/`/g, ''));
    },
  );

  it('lists every type at /problems, each linked to its page', async () => {
    const res = await t.request({ method: 'GET', url: '/problems' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    for (const { slug } of allProblemTypes()) expect(res.body).toContain(`<a href="/problems/${slug}">${slug}</a>`);
  });

  it.each(['no-such-type', 'Not-Found', '%3Cscript%3E'])(
    'answers an unknown type (%s) with a 404 problem',
    async (slug) => {
      const res = await t.request({ method: 'GET', url: `/problems/${slug}` });
      expectProblem(res, 404, 'not-found');
      expect(res.headers['cache-control']).toBeUndefined();
    },
  );

  it('refuses a slug holding a NUL character with the 400 its operation declares', async () => {
    // t.request checks the answer against the document: the 400 must be one it lists.
    const res = await t.request({ method: 'GET', url: '/problems/a%00b' });
    const problem = expectProblem(res, 400, 'validation');
    expect(problem.errors).toEqual([{ field: 'slug', message: 'slug must not contain NUL characters' }]);
  });

  it('is where the type of a problem the service sends resolves to', async () => {
    const problem = expectProblem(await t.request({ method: 'GET', url: '/planets/999999' }), 404, 'not-found');
    const page = await t.request({ method: 'GET', url: problem.type });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<h1>${problem.title}</h1>`);
  });
});

describe('with a public base URL', () => {
  it('sends absolute type URIs, from the filter and from the router alike, that resolve to the pages', async () => {
    const notFound = await public_.request({ method: 'GET', url: '/planets/999999' });
    expect(notFound.json().type).toBe(`${BASE_URL}/problems/not-found`);
    const badUrl = await public_.request({ method: 'GET', url: '/planets/%E0%A4%A' });
    expect(badUrl.json()).toMatchObject({
      status: 400,
      type: `${BASE_URL}/problems/bad-request`,
      title: 'Bad request',
    });
    const page = await public_.request({ method: 'GET', url: new URL(notFound.json().type).pathname });
    expect(page.body).toContain(`<code>${BASE_URL}/problems/not-found</code>`);
    const list = await public_.request({ method: 'GET', url: '/problems' });
    expect(list.body).toContain(`<a href="${BASE_URL}/problems/not-found">`);
  });

  it('keeps CORS preflights answered, and lists no OPTIONS in Allow', async () => {
    // A preflight is no operation of the document: asked of the app directly.
    const preflight = await public_.app.inject({
      method: 'OPTIONS',
      url: '/planets/1',
      headers: { origin: ORIGIN, 'access-control-request-method': 'PUT' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN);
    const wrongMethod = await public_.request({ method: 'PATCH', url: '/planets/1', headers: { origin: ORIGIN } });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD, PUT, DELETE');
    expect(wrongMethod.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(wrongMethod.json().type).toBe(`${BASE_URL}/problems/method-not-allowed`);
    // The preflight route answers every path; it makes no unknown path a known one.
    expect((await public_.request({ method: 'PATCH', url: '/nowhere' })).statusCode).toBe(404);
  });
});

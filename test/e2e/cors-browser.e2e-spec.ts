import { createServer, type Server } from 'node:http';

import { jest } from '@jest/globals';
import type { Browser } from 'playwright-core';

import { launchChromium } from '../support/chromium';
import { freePort } from '../support/processes';
import { newRegion, startTestApp, TestApp } from '../support/test-app';

/**
 * CORS as a browser enforces it: pages served from two other origins call the API with
 * fetch() and an X-API-Key header (so the browser sends a preflight first). The allowed
 * origin reads the answer and its exposed headers; the browser keeps the answer from the
 * other one.
 */
jest.setTimeout(120_000);

let t: TestApp;
let api: string;
let key: string;
let keyId: string;
let browser: Browser;
const pages: Server[] = [];
let allowedOrigin: string;
let otherOrigin: string;

/** A page server on 127.0.0.1 (its own origin), serving one empty page. */
async function pageServer(port: number): Promise<string> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>'),
  );
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  pages.push(server);
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  allowedOrigin = await pageServer(await freePort());
  otherOrigin = await pageServer(await freePort());
  t = await startTestApp({ CORS_ORIGINS: allowedOrigin });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  api = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
  ({ key, keyId } = await newRegion(t, 'CORS region'));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await Promise.all(pages.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Runs fetch() in a page of `origin`; returns what the page could read, or the error it got. */
async function fetchFrom(origin: string, path: string, apiKey?: string, init: { method?: string; body?: string } = {}) {
  const page = await browser.newPage();
  try {
    await page.goto(origin);
    return await page.evaluate(
      async ({ url, apiKey, init }) => {
        try {
          const headers: Record<string, string> = apiKey ? { 'X-API-Key': apiKey } : {};
          if (init.body !== undefined) headers['Content-Type'] = 'application/json';
          const res = await fetch(url, { ...init, headers });
          return { status: res.status, requestId: res.headers.get('X-Request-ID'), body: await res.json() };
        } catch (err) {
          return { error: String(err) };
        }
      },
      { url: `${api}${path}`, apiKey, init },
    );
  } finally {
    await page.close();
  }
}

it('lets a page of an allowed origin call the API with a key, and read the answer and X-Request-ID', async () => {
  const answer = await fetchFrom(allowedOrigin, '/auth/regions/me', key);
  expect(answer).toMatchObject({ status: 200, requestId: expect.any(String), body: { name: 'CORS region' } });
  // A problem document is readable too.
  expect(await fetchFrom(allowedOrigin, '/auth/regions/me', 'rk_wrong')).toMatchObject({
    status: 401,
    body: { status: 401 },
  });
});

it('lets a page of an allowed origin send every method the API has, PATCH included', async () => {
  const patched = await fetchFrom(allowedOrigin, `/auth/region/api-keys/${keyId}`, key, {
    method: 'PATCH',
    body: JSON.stringify({ description: 'renamed from a page' }),
  });
  expect(patched).toMatchObject({ status: 200, body: { description: 'renamed from a page' } });
});

it('keeps the answer from a page of another origin: its fetch fails in the browser', async () => {
  expect(await fetchFrom(otherOrigin, '/auth/regions/me', key)).toEqual({
    error: expect.stringMatching(/TypeError: Failed to fetch/),
  });
  // Even a simple request with no preflight: the response is not the page's to read.
  expect(await fetchFrom(otherOrigin, '/planets')).toEqual({
    error: expect.stringMatching(/TypeError: Failed to fetch/),
  });
});

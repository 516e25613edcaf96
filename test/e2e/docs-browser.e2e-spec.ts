import { mkdirSync } from 'node:fs';

import { jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';

import { launchChromium } from '../support/chromium';
import { newRegion, startTestApp, TestApp } from '../support/test-app';
import { newUser } from '../support/users';

/**
 * Swagger UI at /docs, driven in Debian's Chromium the way a person uses it: authorise,
 * "Try it out", read the response. Screenshots go to test-artifacts/ (ignored by git).
 */
jest.setTimeout(120_000);

const ARTIFACTS = 'test-artifacts/browser';
let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function authorize(schemeName: string, fill: (container: ReturnType<Page['locator']>) => Promise<void>) {
  await page.locator('.auth-wrapper .btn.authorize').click();
  const container = page.locator('.auth-container', { hasText: schemeName });
  await fill(container);
  await container.locator('button.authorize').click();
  await page.locator('.auth-btn-wrapper .btn-done').first().click();
}

async function tryItOut(operationId: string, requestBody?: unknown): Promise<{ status: string; body: string }> {
  const block = page.locator(`[id$="-${operationId}"]`);
  const tryOut = block.locator('.try-out__btn');
  // The page may still be settling (a restored authorisation re-renders it): when the button
  // does not take the click, open the operation again, as a person clicks again, and then
  // reload the page, as a person does with a page that stays stuck.
  for (let attempt = 1; ; attempt++) {
    await block.waitFor();
    if (!(await block.getAttribute('class'))?.includes('is-open')) await block.locator('.opblock-summary').click();
    try {
      await tryOut.click({ timeout: 10_000 });
      break;
    } catch (error) {
      if (attempt === 3) {
        // Best effort: a renderer too stuck to paint must not hide the error behind a screenshot's own timeout.
        await page.screenshot({ path: `${ARTIFACTS}/failed-${operationId}.png`, timeout: 5_000 }).catch(() => {});
        throw error;
      }
      if (attempt === 2) await page.reload();
    }
  }
  if (requestBody !== undefined) await block.locator('textarea.body-param__text').fill(JSON.stringify(requestBody));
  await block.locator('.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  const body = await block.locator('.live-responses-table .response-col_description .microlight').first().innerText();
  return { status: (await status.innerText()).trim(), body };
}

it('authorises with an API key, runs GET /auth/regions/me with "Try it out", and keeps the key across a reload', async () => {
  const region = await newRegion(t, 'Browser region');
  await page.goto(`${base}/docs`);
  await page.locator('.swagger-ui .info .title').waitFor();
  await page.screenshot({ path: `${ARTIFACTS}/01-docs.png` });

  await authorize('apiKeyHeader', (c) => c.locator('input').first().fill(region.key));
  const { status, body } = await tryItOut('getMyRegion');
  await page.screenshot({ path: `${ARTIFACTS}/02-regions-me.png` });
  expect(status).toBe('200');
  expect(JSON.parse(body)).toMatchObject({ id: region.regionId, name: 'Browser region' });

  await page.reload({ waitUntil: 'networkidle' });
  await page.locator('.swagger-ui .info .title').waitFor();
  const again = await tryItOut('getMyRegion');
  expect(again.status).toBe('200');
});

it('lists the region\'s events with "Try it out", as the key authorised above', async () => {
  await page.goto(`${base}/docs`);
  await page.locator('.swagger-ui .info .title').waitFor();
  const { status, body } = await tryItOut('listRegionEvents');
  await page.screenshot({ path: `${ARTIFACTS}/02b-region-events.png` });
  expect(status).toBe('200');
  expect(JSON.parse(body)).toEqual({
    data: [expect.objectContaining({ type: 'region.created', actor: { type: 'operator' } })],
    meta: { limit: 20, next: null },
  });
});

it('opens with getting started, then groups operations by tag, region keys first and health last, each described', async () => {
  await page.goto(`${base}/docs`);
  await page.locator('.swagger-ui .opblock-tag').first().waitFor();
  await expect(page.locator('.swagger-ui .info h2', { hasText: 'Getting started' }).count()).resolves.toBe(1);
  await expect(page.locator('.swagger-ui .info li code', { hasText: 'GET /auth/regions/me' }).count()).resolves.toBe(1);
  const tags = await page
    .locator('.opblock-tag-section h3 .nostyle span, .opblock-tag-section h3 a span')
    .allInnerTexts();
  expect(tags).toEqual(['Region API keys', 'Authentication', 'Planets', 'Celestial Bodies', 'Problems', 'Health']);
  await expect(page.locator('.opblock-tag-section h3 small').first().innerText()).resolves.toMatch(/X-API-Key/);
  await expect(page.locator('.opblock-summary-description', { hasText: 'Create an API key' }).count()).resolves.toBe(1);
  await page.screenshot({ path: `${ARTIFACTS}/00-docs-top.png` });
});

it('signs up and gets a token through the page, authorises with it, and runs GET /me', async () => {
  await page.goto(`${base}/docs`);
  await page.locator('.swagger-ui .info .title').waitFor();
  const email = `browser-${Date.now()}@example.com`;

  const signUp = await tryItOut('createUser', { name: 'Browser user', email, password: 'correct horse battery' });
  expect(signUp.status).toBe('201');
  const user = JSON.parse(signUp.body);
  expect(user).toEqual({ id: expect.any(Number), name: 'Browser user' });

  const issued = await tryItOut('getToken', { email, password: 'correct horse battery' });
  expect(issued.status).toBe('201');
  const { token } = JSON.parse(issued.body);
  await page.screenshot({ path: `${ARTIFACTS}/03-token.png` });

  await authorize('bearerAuth', (c) => c.locator('input').first().fill(token));
  const me = await tryItOut('getMe');
  await page.screenshot({ path: `${ARTIFACTS}/04-me.png` });
  expect(me.status).toBe('200');
  expect(JSON.parse(me.body)).toEqual({ id: user.id, name: 'Browser user' });
});

it('authorises with Basic credentials (email and password) and runs GET /me', async () => {
  const user = await newUser(t, { name: 'Basic user' });
  await page.goto(`${base}/docs`);
  // Forget the Bearer token the previous test authorised with (persisted in localStorage).
  await page.evaluate('localStorage.clear()');
  await page.reload({ waitUntil: 'networkidle' });
  await page.locator('.swagger-ui .info .title').waitFor();
  await authorize('basicAuth', async (c) => {
    await c.locator('input[type="text"]').first().fill(user.email);
    await c.locator('input[type="password"]').first().fill(user.password);
  });
  const me = await tryItOut('getMe');
  await page.screenshot({ path: `${ARTIFACTS}/05-me-basic.png` });
  expect(me.status).toBe('200');
  expect(JSON.parse(me.body)).toEqual({ id: user.id, name: 'Basic user' });
});

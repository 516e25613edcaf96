import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Response } from 'light-my-request';

import { expectProblem as expectProblemResponse } from '../support/problems';
import { startTestApp, type TestApp } from '../support/test-app';
import { newUser, type UserFixture } from '../support/users';

// Shared by the planets-* and celestial-* suites (not a suite itself).

export const fixture = (name: string): Buffer => readFileSync(join(process.cwd(), 'test', 'fixtures', name));

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A problem response; with `field`, one whose errors name that field. */
export function expectProblem(res: Response, status: number, field?: string) {
  const body = expectProblemResponse(res, status);
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
  const res = await t.request({
    method: 'POST',
    url: '/planets',
    headers: { authorization: user.basic },
    payload: { name: 'Mars', ...body },
  });
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

export async function createSatellite(
  t: TestApp,
  user: UserFixture,
  planetId: number,
  body: Record<string, unknown> = {},
) {
  const res = await t.request({
    method: 'POST',
    url: '/celestial-bodies',
    headers: { authorization: user.bearer },
    payload: { name: 'Phobos', type: 'moon', orbit: { planet: { id: planetId } }, ...body },
  });
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

/** A test app with two users, Alice and Bob, for the planets and celestial-bodies suites. */
export async function startWithAliceAndBob(): Promise<{ t: TestApp; alice: UserFixture; bob: UserFixture }> {
  const t = await startTestApp();
  return { t, alice: await newUser(t, { name: 'Alice' }), bob: await newUser(t, { name: 'Bob' }) };
}

import { createHmac, randomBytes } from 'node:crypto';

import type { TestApp } from './test-app';

export interface UserFixture {
  id: number;
  email: string;
  password: string;
  name: string | null;
  /** A full Authorization header value: `Basic base64(email:password)`. */
  basic: string;
  /** A full Authorization header value: `Bearer <jwt>`. */
  bearer: string;
}

export const basicHeader = (email: string, password: string): string =>
  `Basic ${Buffer.from(`${email}:${password}`, 'utf8').toString('base64')}`;

/** A user signed up over HTTP, with a token from POST /auth/token. */
export async function newUser(
  t: TestApp,
  overrides: { email?: string; password?: string; name?: string | null } = {},
): Promise<UserFixture> {
  const email = overrides.email ?? `user-${randomBytes(6).toString('hex')}@example.com`;
  const password = overrides.password ?? `pw-${randomBytes(9).toString('base64url')}`;
  const name = overrides.name === undefined ? 'Test user' : overrides.name;
  const signup = await t.request({ method: 'POST', url: '/user/signup', payload: { name, email, password } });
  if (signup.statusCode !== 201) throw new Error(`sign-up failed: ${signup.statusCode} ${signup.body}`);
  const { id } = signup.json<{ id: number }>();
  const issued = await t.request({ method: 'POST', url: '/auth/token', payload: { email, password } });
  if (issued.statusCode !== 201) throw new Error(`token failed: ${issued.statusCode} ${issued.body}`);
  const { token } = issued.json<{ token: string }>();
  return { id, email, password, name, basic: basicHeader(email, password), bearer: `Bearer ${token}` };
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const HMAC: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };

/** A JWT made by hand, so a test can forge what a client might send (`alg: none` included). */
export function signJwt(
  payload: Record<string, unknown>,
  secret: string,
  header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' },
): string {
  const signed = `${base64url(header)}.${base64url(payload)}`;
  const hmac = HMAC[String(header.alg)];
  return `${signed}.${hmac ? createHmac(hmac, secret).update(signed).digest('base64url') : ''}`;
}

/** The header and claims of a JWT, unverified. */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
  return { header, payload };
}

import { createHmac, generateKeyPairSync, sign as signWithKey } from 'node:crypto';

import { JwtService } from '@nestjs/jwt';
import type { FastifyRequest } from 'fastify';

import { AuthSettings } from '../../src/auth/auth.settings';
import { JwtSettings } from '../../src/auth/jwt-settings';
import { JwtStrategy } from '../../src/auth/strategies/jwt.strategy';
import { TokenService } from '../../src/auth/token.service';
import { authenticateWith } from '../../src/common/auth/authenticate-with';
import { type AppConfig, loadSettings } from '../../src/config/app-config';
import type { UsersService } from '../../src/users/users.service';
import { signJwt } from '../support/users';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const ANN = { id: 7, name: 'Ann', email: 'ann@example.com' };

/** The strategy with real settings, a real TokenService, and one user (id 7) to find. */
function setup(env: NodeJS.ProcessEnv = {}) {
  const settings = JwtSettings.fromSettings(loadSettings(AuthSettings, { JWT_SECRET: SECRET, ...env }), {
    API_ENVIRONMENT: 'live',
  } as AppConfig);
  const users = { findById: async (id: number) => (id === ANN.id ? { ...ANN } : null) } as unknown as UsersService;
  const tokens = new TokenService(new JwtService(), settings, users);
  const userFor = jest.spyOn(tokens, 'userFor');
  const strategy = new JwtStrategy(settings, tokens);
  const check = async (authorization?: string | string[]) =>
    strategy.validate({ headers: authorization === undefined ? {} : { authorization } } as FastifyRequest);
  return { strategy, tokens, userFor, check };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({
  sub: String(ANN.id),
  iat: nowSeconds(),
  exp: nowSeconds() + 60,
  ...extra,
});
const bearer = (token: string) => `Bearer ${token}`;
const segments = (token: string) => token.split('.') as [string, string, string];
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

afterEach(() => jest.restoreAllMocks());

describe('JwtStrategy (Bearer, fast-jwt)', () => {
  it('accepts a token from TokenService.issue and a hand-signed HS256 one, and resolves the user', async () => {
    const { tokens, check, userFor } = setup();
    const issued = await tokens.issue(ANN);
    await expect(check(bearer(issued))).resolves.toEqual(ANN);
    await expect(check(bearer(signJwt(claims(), SECRET)))).resolves.toEqual(ANN);
    // The scheme is case-insensitive, as before.
    await expect(check(`bearer ${issued}`)).resolves.toEqual(ANN);
    // Any number of spaces after the scheme (RFC 9110: 1*SP), as for Basic.
    await expect(check(`Bearer   ${issued}`)).resolves.toEqual(ANN);
    expect(userFor).toHaveBeenCalledTimes(4);
    expect(userFor.mock.calls[0][0]).toMatchObject({ sub: '7', exp: expect.any(Number) });
  });

  it('refuses a valid token of a user that does not exist (userFor says null)', async () => {
    const { check } = setup();
    await expect(check(bearer(signJwt(claims({ sub: '8' }), SECRET)))).resolves.toBeNull();
  });

  describe('refuses, before any user lookup', () => {
    const now = () => nowSeconds();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rs256 = (payload: Record<string, unknown>) => {
      const input = `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url(payload)}`;
      return `${input}.${signWithKey('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    };
    const valid = () => signJwt(claims(), SECRET);

    it.each<[string, () => string | string[] | undefined]>([
      ['no Authorization header', () => undefined],
      ['an empty header', () => ''],
      ['"Bearer" alone', () => 'Bearer'],
      ['garbage', () => 'Bearer not.a.jwt'],
      ['garbage of the right shape', () => 'Bearer aaaa.bbbb.cccc'],
      [
        'a header that is not JSON',
        () => bearer(`${Buffer.from('{alg').toString('base64url')}.${segments(valid())[1]}.x`),
      ],
      ['another scheme', () => `Basic ${Buffer.from('ann@example.com:pw').toString('base64')}`],
      ['the token without the scheme', () => valid()],
      ['the token followed by junk', () => `${bearer(valid())} junk`],
      ['a tab, not a space, after the scheme', () => `Bearer\t${valid()}`],
      ['the header given twice', () => [bearer(valid()), bearer(valid())]],
      ['an expired token', () => bearer(signJwt(claims({ iat: now() - 7200, exp: now() - 3600 }), SECRET))],
      ['a token that expired a second ago', () => bearer(signJwt(claims({ exp: now() - 1 }), SECRET))],
      ['a token not valid yet (nbf)', () => bearer(signJwt(claims({ nbf: now() + 60, exp: now() + 120 }), SECRET))],
      [
        'a token signed with another secret',
        () => bearer(signJwt(claims(), 'another-secret-of-at-least-32-characters')),
      ],
      [
        'a token whose payload was changed',
        () => {
          const [header, , signature] = segments(valid());
          return bearer(`${header}.${base64url(claims({ sub: '1' }))}.${signature}`);
        },
      ],
      ['alg "none" without a signature', () => bearer(signJwt(claims(), SECRET, { alg: 'none', typ: 'JWT' }))],
      [
        'alg "none" with the signature of the HS256 token',
        () => {
          const [, payload, signature] = segments(valid());
          return bearer(`${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`);
        },
      ],
      ['HS512 with the same secret', () => bearer(signJwt(claims(), SECRET, { alg: 'HS512', typ: 'JWT' }))],
      ['HS384 with the same secret', () => bearer(signJwt(claims(), SECRET, { alg: 'HS384', typ: 'JWT' }))],
      ['a real RS256 token', () => bearer(rs256(claims()))],
      [
        'an RS256 header over an HMAC with the secret (algorithm confusion)',
        () => {
          const input = `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url(claims())}`;
          return bearer(`${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`);
        },
      ],
      ['a token without exp', () => bearer(signJwt({ sub: '7', iat: now() }, SECRET))],
      ['a token without iat', () => bearer(signJwt({ sub: '7', exp: now() + 60 }, SECRET))],
      ['a token whose iat is text', () => bearer(signJwt(claims({ iat: String(now()) }), SECRET))],
      ['a token with exp at 1e20', () => bearer(signJwt(claims({ exp: 1e20 }), SECRET))],
      [
        'a token issued a year ahead',
        () => bearer(signJwt(claims({ iat: now() + 365 * 86400, exp: now() + 365 * 86400 + 60 }), SECRET)),
      ],
      ['a token whose exp is text', () => bearer(signJwt(claims({ exp: String(now() + 60) }), SECRET))],
      ['a token whose nbf is text', () => bearer(signJwt(claims({ nbf: String(now() - 60) }), SECRET))],
      ['a payload that is not an object', () => bearer(signJwt([1, 2] as unknown as Record<string, unknown>, SECRET))],
      [
        'an unknown critical header',
        () => bearer(signJwt(claims(), SECRET, { alg: 'HS256', typ: 'JWT', crit: ['x'], x: 1 })),
      ],
    ])('%s', async (_label, header) => {
      const { check, userFor } = setup();
      await expect(check(header())).resolves.toBeNull();
      expect(userFor).not.toHaveBeenCalled();
    });

    it('another spelling of a valid signature (its last character with other unused bits)', async () => {
      const { check, userFor } = setup();
      const token = valid();
      await expect(check(bearer(token))).resolves.toEqual(ANN);
      const last = BASE64URL.indexOf(token.at(-1)!);
      for (const bits of [1, 2, 3]) {
        // The same 32 bytes once decoded; jsonwebtoken refused these, and so does this strategy.
        const respelled = token.slice(0, -1) + BASE64URL[last ^ bits];
        expect(Buffer.from(segments(respelled)[2], 'base64url')).toEqual(Buffer.from(segments(token)[2], 'base64url'));
        await expect(check(bearer(respelled))).resolves.toBeNull();
      }
      expect(userFor).toHaveBeenCalledTimes(1);
    });
  });

  describe('with JWT_ISSUER and JWT_AUDIENCE', () => {
    const env = { JWT_ISSUER: 'https://api.example', JWT_AUDIENCE: 'galaxy-clients' };
    const scoped = (extra: Record<string, unknown> = {}) =>
      bearer(signJwt(claims({ iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, ...extra }), SECRET));

    it('accepts an issued token, and one whose aud list names this audience', async () => {
      const { tokens, check } = setup(env);
      await expect(check(bearer(await tokens.issue(ANN)))).resolves.toEqual(ANN);
      await expect(check(scoped())).resolves.toEqual(ANN);
      await expect(check(scoped({ aud: ['someone-else', env.JWT_AUDIENCE] }))).resolves.toEqual(ANN);
    });

    it.each<[string, Record<string, unknown>]>([
      ['a wrong issuer', { iss: 'https://evil.example' }],
      ['a wrong audience', { aud: 'someone-else' }],
      ['no issuer', { iss: undefined }],
      ['no audience', { aud: undefined }],
      ['an issuer list', { iss: [env.JWT_ISSUER] }],
      ['an empty audience list', { aud: [] }],
    ])('refuses %s', async (_label, extra) => {
      const { check, userFor } = setup(env);
      await expect(check(scoped(extra))).resolves.toBeNull();
      expect(userFor).not.toHaveBeenCalled();
    });

    it('accepts a token without iss and aud when neither is configured', async () => {
      const { check } = setup();
      await expect(check(bearer(signJwt(claims(), SECRET)))).resolves.toEqual(ANN);
    });
  });

  describe('over time, with verified tokens remembered', () => {
    it('refuses a token once it has expired, though it was accepted (and remembered) before', async () => {
      const { check } = setup();
      const start = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
      const exp = Math.floor(start / 1000) + 60;
      const token = bearer(signJwt(claims({ exp }), SECRET));
      await expect(check(token)).resolves.toEqual(ANN);
      await expect(check(token)).resolves.toEqual(ANN);
      clock.mockReturnValue(exp * 1000 - 1);
      await expect(check(token)).resolves.toEqual(ANN);
      clock.mockReturnValue(exp * 1000 + 1);
      await expect(check(token)).resolves.toBeNull();
      await expect(check(token)).resolves.toBeNull();
    });

    it('accepts a token from its nbf on, though it was refused before', async () => {
      const { check } = setup();
      const start = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
      const nbf = Math.floor(start / 1000) + 30;
      const token = bearer(signJwt(claims({ nbf, exp: nbf + 60 }), SECRET));
      await expect(check(token)).resolves.toBeNull();
      clock.mockReturnValue(nbf * 1000);
      await expect(check(token)).resolves.toEqual(ANN);
      // Remembered from then on, but only up to its exp.
      clock.mockReturnValue((nbf + 60) * 1000 + 1);
      await expect(check(token)).resolves.toBeNull();
    });
  });

  describe('lifetime and clock skew: iat at most 30 s ahead, exp − iat at most JWT_TTL + 30 s', () => {
    const TTL = 600;
    // A whole second, so that the limits below are exact.
    const start = Math.floor(Date.now() / 1000) * 1000;
    const at = (iat: number, lifetime: number) => bearer(signJwt(claims({ iat, exp: iat + lifetime }), SECRET));
    const s = start / 1000;

    beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(start));

    it('accepts a token at both limits', async () => {
      const { check } = setup({ JWT_TTL: String(TTL) });
      await expect(check(at(s, TTL + 30))).resolves.toEqual(ANN);
      await expect(check(at(s + 30, TTL))).resolves.toEqual(ANN);
      await expect(check(at(s - TTL, TTL + 30))).resolves.toEqual(ANN);
    });

    it.each<[string, number, number]>([
      ['living a second longer than JWT_TTL + 30 s', s, TTL + 31],
      ['issued 31 s ahead', s + 31, TTL],
      ['issued 31 s ahead, however short-lived', s + 31, 1],
    ])('refuses a token %s', async (_label, iat, lifetime) => {
      const { check, userFor } = setup({ JWT_TTL: String(TTL) });
      await expect(check(at(iat, lifetime))).resolves.toBeNull();
      expect(userFor).not.toHaveBeenCalled();
    });

    it('accepts a token issued ahead once the clock is within 30 s of its iat, though refused before', async () => {
      const { check } = setup({ JWT_TTL: String(TTL) });
      const token = at(s + 60, TTL);
      await expect(check(token)).resolves.toBeNull();
      jest.spyOn(Date, 'now').mockReturnValue(start + 30_000);
      await expect(check(token)).resolves.toEqual(ANN);
    });

    it('refuses a long-lived token on every request, though its signature is remembered', async () => {
      const { check } = setup({ JWT_TTL: String(TTL) });
      const token = at(s, TTL + 31);
      await expect(check(token)).resolves.toBeNull();
      await expect(check(token)).resolves.toBeNull();
    });
  });

  describe('through Passport', () => {
    it('succeeds with the user for a valid token, and fails (no error) for anything else', async () => {
      const { strategy, tokens } = setup();
      const run = (authorization?: string) =>
        authenticateWith([strategy], { headers: authorization === undefined ? {} : { authorization } }, {});
      await expect(run(bearer(await tokens.issue(ANN)))).resolves.toEqual(ANN);
      await expect(run()).resolves.toBe(false);
      await expect(run('Bearer not.a.jwt')).resolves.toBe(false);
      await expect(run(bearer(signJwt(claims({ exp: nowSeconds() - 1 }), SECRET)))).resolves.toBe(false);
      await expect(run(bearer(signJwt(claims({ sub: '8' }), SECRET)))).resolves.toBe(false);
    });
  });
});

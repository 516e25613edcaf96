import { randomBytes } from 'node:crypto';

import { jest } from '@jest/globals';
import type { Response } from 'light-my-request';

import { BasicAuthCache } from '../../src/auth/basic-auth-cache';
import { CHECKS_PER_ADDRESS } from '../../src/auth/password-check-slots';
import { PasswordHasher } from '../../src/users/password-hasher';
import { TwoInstances, twoInstancesSharingRedis } from '../support/redis';
import { startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser } from '../support/users';

// The failed-sign-in limit must hold for attempts sent at the same moment, not only one
// after another: each takes its slot before its password is checked.

const LIMIT = 3;

const token = (t: TestApp, email: string, password: string, remoteAddress?: string) =>
  t.request({ method: 'POST', url: '/auth/token', payload: { email, password }, remoteAddress });
const basic = (t: TestApp, email: string, password: string, remoteAddress?: string) =>
  t.request({ method: 'GET', url: '/me', headers: { authorization: basicHeader(email, password) }, remoteAddress });

const count = (responses: Response[], status: number) => responses.filter((r) => r.statusCode === status).length;

/** Every request of the batch is sent before any is answered. */
const batch = (requests: (() => Promise<Response>)[]) => Promise.all(requests.map((send) => send()));
const times = (n: number, send: (i: number) => Promise<Response>) => Array.from({ length: n }, (_, i) => () => send(i));

/**
 * A gate the mocked password checks wait at, opened by the test when what it waits for has
 * happened (not after a delay, which a loaded machine can outlast), or after five seconds, so
 * that code which never lets it happen fails its assertions instead of hanging.
 */
function gate(): { passed: Promise<void>; open: () => void } {
  let open!: () => void;
  const passed = new Promise<void>((resolve) => (open = resolve));
  setTimeout(open, 5000).unref();
  return { passed, open };
}

/** Counts the password checks (bcrypt) the apps make while `run` runs. */
async function countingChecks<T>(apps: TestApp[], run: () => Promise<T>): Promise<{ value: T; checks: number }> {
  const spies = apps.map((t) => jest.spyOn(t.app.get(PasswordHasher), 'compare'));
  try {
    const value = await run();
    return { value, checks: spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0) };
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
}

describe('failed sign-ins sent at once, one instance (counters in memory)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ LOGIN_FAILURE_LIMIT: String(LIMIT) });
  });
  afterAll(async () => t?.close());

  it.each([
    ['POST /auth/token', token],
    ['Basic', basic],
  ])('through %s, checks only LIMIT of 30 wrong passwords; the rest are 429 unchecked', async (_, send) => {
    const u = await newUser(t);
    const { value: responses, checks } = await countingChecks([t], () =>
      batch(times(30, (i) => send(t, u.email, `wrong-password-${i}`))),
    );
    expect(count(responses, 401)).toBe(LIMIT);
    expect(count(responses, 429)).toBe(30 - LIMIT);
    expect(checks).toBe(LIMIT);
  });

  it.each([
    ['POST /auth/token', token],
    ['Basic', basic],
  ])('through %s, refuses the right password sent after 30 wrong ones in the same batch', async (_, send) => {
    const u = await newUser(t);
    const responses = await batch([
      ...times(30, (i) => send(t, u.email, `wrong-password-${i}`)),
      () => send(t, u.email, u.password),
    ]);
    expect(count(responses.slice(0, 30), 401)).toBe(LIMIT);
    expect(responses[30].statusCode).toBe(429);
  });

  it('counts token and Basic attempts against one limit', async () => {
    const u = await newUser(t);
    const responses = await batch([
      ...times(15, (i) => token(t, u.email, `wrong-password-${i}`)),
      ...times(15, (i) => basic(t, u.email, `other-wrong-password-${i}`)),
    ]);
    expect(count(responses, 401)).toBe(LIMIT);
  });

  it('lets identical Basic guesses sent together share one check and one slot: they are one guess', async () => {
    const u = await newUser(t);
    // The first check lasts until all 30 have asked for one.
    const allAsked = gate();
    const cache = t.app.get(BasicAuthCache);
    const checkOnce = cache.checkOnce.bind(cache);
    let asked = 0;
    const asking = jest.spyOn(cache, 'checkOnce').mockImplementation((...args) => {
      if (++asked === 30) allAsked.open();
      return checkOnce(...args);
    });
    const hasher = t.app.get(PasswordHasher);
    const compare = hasher.compare.bind(hasher);
    const slow = jest.spyOn(hasher, 'compare').mockImplementation(async (password, hash) => {
      await allAsked.passed;
      return compare(password, hash);
    });
    let responses: Response[];
    try {
      responses = await batch(times(30, () => basic(t, u.email, 'wrong-password')));
      expect(asked).toBe(30);
      expect(slow).toHaveBeenCalledTimes(1);
    } finally {
      slow.mockRestore();
      asking.mockRestore();
    }
    expect(count(responses, 401)).toBe(30);
    // LIMIT - 1 distinct failures are still allowed after them, then 429.
    const distinct = await batch(times(LIMIT + 2, (i) => basic(t, u.email, `wrong-password-${i}`)));
    expect(count(distinct, 401)).toBe(LIMIT - 1);
  });

  it('does not count right passwords sent together, so the user keeps the whole allowance', async () => {
    const u = await newUser(t);
    const responses = await batch(times(LIMIT, () => token(t, u.email, u.password)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(LIMIT).fill(201));
    // All LIMIT failures are still allowed after them.
    const wrong = await batch(times(LIMIT + 2, () => token(t, u.email, 'wrong-password')));
    expect(count(wrong, 401)).toBe(LIMIT);
  });

  it('lets many concurrent requests with cached Basic credentials through: they need no slot', async () => {
    const u = await newUser(t);
    expect((await basic(t, u.email, u.password)).statusCode).toBe(200);
    const responses = await batch(times(20, () => basic(t, u.email, u.password)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
  });

  it.each([
    ['POST /auth/token', token],
    ['Basic', basic],
  ])(
    'through %s, checks at most CHECKS_PER_ADDRESS passwords of one address at once, for any emails; another address does not queue behind them',
    async (_, send) => {
      // The flood's checks last until the other address's check has started: if it queued behind
      // them, they would wait out the gate's five seconds, and it would start after all twelve.
      const otherStarted = gate();
      const started: string[] = [];
      let [flooding, mostFlooding] = [0, 0];
      const slow = jest.spyOn(t.app.get(PasswordHasher), 'compare').mockImplementation(async (password) => {
        started.push(password);
        const flood = password.startsWith('flood');
        if (!flood) otherStarted.open();
        if (flood) mostFlooding = Math.max(mostFlooding, ++flooding);
        await otherStarted.passed;
        if (flood) flooding--;
        return false;
      });
      try {
        const someone = () => `nobody-${randomBytes(4).toString('hex')}@example.com`;
        const responses = await batch([
          ...times(12, (i) => send(t, someone(), `flood-${i}`, '192.0.2.90')),
          () => send(t, someone(), 'elsewhere', '198.51.100.90'),
        ]);
        expect(count(responses, 401)).toBe(13);
      } finally {
        slow.mockRestore();
      }
      expect(mostFlooding).toBe(CHECKS_PER_ADDRESS);
      // Started while the first of the flood were checked, not after the twelve.
      expect(started.indexOf('elsewhere')).toBeLessThanOrEqual(CHECKS_PER_ADDRESS);
    },
  );

  it('gives the slot back when the check fails for a reason other than the password', async () => {
    const u = await newUser(t);
    const compare = jest.spyOn(t.app.get(PasswordHasher), 'compare').mockRejectedValue(new Error('hashing failed'));
    try {
      for (let i = 0; i < LIMIT + 1; i++) {
        // app.inject: a 500 is no answer the OpenAPI document promises, so the checked request would throw.
        const res = await t.app.inject({
          method: 'POST',
          url: '/auth/token',
          payload: { email: u.email, password: u.password },
        });
        expect(res.statusCode).toBe(500);
      }
    } finally {
      compare.mockRestore();
    }
    expect((await token(t, u.email, u.password)).statusCode).toBe(201);
  });
});

describe('failed sign-ins sent at once through two instances sharing Redis', () => {
  let instances: TwoInstances;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    instances = await twoInstancesSharingRedis({ LOGIN_FAILURE_LIMIT: String(LIMIT) });
    ({ a, b } = instances);
  });
  afterAll(async () => instances?.close());

  it.each([
    ['POST /auth/token', token],
    ['Basic', basic],
  ])('through %s, checks only LIMIT of 30 wrong passwords across both', async (_, send) => {
    // No such user: an unknown email is counted exactly like a known one (and needs no
    // account on the embedded database of each instance).
    const email = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    const { value: responses, checks } = await countingChecks([a, b], () =>
      batch(Array.from({ length: 30 }, (_, i) => () => send(i % 2 ? a : b, email, `wrong-password-${i}`))),
    );
    expect(count(responses, 401)).toBe(LIMIT);
    expect(count(responses, 429)).toBe(30 - LIMIT);
    expect(checks).toBe(LIMIT);
  });

  it('refuses the right password sent after 30 wrong ones in the same batch', async () => {
    const u = await newUser(a);
    const responses = await batch([
      ...times(30, (i) => token(a, u.email, `wrong-password-${i}`)),
      () => token(a, u.email, u.password),
    ]);
    expect(count(responses, 401)).toBe(LIMIT);
    expect(responses[30].statusCode).toBe(429);
  });
});

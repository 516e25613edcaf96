// Mixed traffic for the topology scripts (roll.mjs, pooler.mjs): reads, sign-ups, planets
// created, changed and deleted by their creators, region keys created and deleted, sent at a
// fixed rate whatever the answers take, while a scenario runs.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const pick = (list) => list[Math.floor(Math.random() * list.length)];

/**
 * Traffic to `base()` (the address the next request goes to: a balancer's, or one of the
 * instances'), as users of the region of `initialKey` and of the accounts it signs up.
 * Users are named `<label>-<uuid>@example.com`.
 */
export function mixedTraffic({ base, initialKey, label = 'traffic' }) {
  const users = [];
  const planets = [];
  const keys = [];

  async function send(method, path, { body, token, apiKey } = {}) {
    const headers = { 'x-request-id': randomUUID() };
    if (body) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    if (apiKey) headers['x-api-key'] = apiKey;
    const res = await fetch(base() + path, { method, headers, body: body && JSON.stringify(body) });
    const text = await res.text();
    return {
      status: res.status,
      body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {},
    };
  }

  async function signUp() {
    const email = `${label}-${randomUUID()}@example.com`;
    const password = `pw-${randomBytes(9).toString('base64url')}`;
    const made = await send('POST', '/user/signup', { body: { name: 'Traffic', email, password } });
    if (made.status !== 201) return made;
    const issued = await send('POST', '/auth/token', { body: { email, password } });
    if (issued.status === 201) users.push({ token: issued.body.token });
    return issued;
  }

  async function createPlanet() {
    const owner = pick(users);
    const res = await send('POST', '/planets', {
      body: { name: `Traffic ${randomBytes(3).toString('hex')}`, type: 'terrestrial', tags: ['traffic'] },
      token: owner.token,
    });
    if (res.status === 201) planets.push({ id: res.body.id, owner });
    return res;
  }

  /** A planet no other request is using, out of the list until `work` ends (and back in unless deleted). */
  async function withPlanet(work, { keep = true } = {}) {
    const planet = planets.splice(Math.floor(Math.random() * planets.length), 1)[0];
    if (!planet) return createPlanet();
    const res = await work(planet);
    if (keep || res.status >= 300) planets.push(planet);
    return res;
  }

  /** Every key change locks the region's row, one at a time: a few a second, and never near the region's limit. */
  async function changeKey() {
    if (keys.length >= 10) return send('DELETE', `/auth/region/api-keys/${keys.shift()}`, { apiKey: initialKey });
    const res = await send('POST', '/auth/region/api-keys', { body: { description: 'traffic' }, apiKey: initialKey });
    if (res.status === 201) keys.push(res.body.id);
    return res;
  }

  const changePlanet = () =>
    withPlanet((p) =>
      send('PUT', `/planets/${p.id}`, {
        body: { name: `Traffic ${randomBytes(3).toString('hex')}`, type: 'dwarf' },
        token: p.owner.token,
      }),
    );
  const deletePlanet = () =>
    planets.length > 20
      ? withPlanet((p) => send('DELETE', `/planets/${p.id}`, { token: p.owner.token }), { keep: false })
      : createPlanet();

  /** [weight, request] pairs: what the traffic sends, in what proportions. */
  const mixes = {
    mixed: [
      [30, () => send('GET', `/planets?limit=${1 + Math.floor(Math.random() * 20)}`)],
      [15, () => (planets.length ? send('GET', `/planets/${pick(planets).id}`) : send('GET', '/planets'))],
      [10, () => send('GET', '/auth/regions/me', { apiKey: initialKey })],
      [5, () => send('GET', '/me', { token: pick(users).token })],
      [14, createPlanet],
      [14, changePlanet],
      [8, deletePlanet],
      [4, changeKey],
    ],
    writes: [
      [40, createPlanet],
      [30, changePlanet],
      [15, deletePlanet],
      [15, changeKey],
    ],
  };

  function operation(mix) {
    const total = mix.reduce((sum, [w]) => sum + w, 0);
    let r = Math.random() * total;
    for (const [weight, run] of mix) if ((r -= weight) < 0) return run;
    return mix[0][1];
  }

  // Sign-ups count against the limit per client address (20 a minute), and every request
  // comes from this one: one every 6 s keeps them all 201.
  let lastSignUp = 0;

  /** A few users and planets for the traffic to use, made one after another. */
  async function seed({ users: userCount = 4, planets: planetCount = 20 } = {}) {
    for (let i = 0; i < userCount; i++) await signUp();
    lastSignUp = performance.now();
    for (let i = 0; i < planetCount; i++) await createPlanet();
    if (users.length < userCount || planets.length < planetCount)
      throw new Error(`seeding made ${users.length} users and ${planets.length} planets`);
  }

  /**
   * Sends `rate` requests a second of `mix` ('mixed' or 'writes'), on schedule whatever the
   * answers take, while `scenario` runs and for at least `seconds`; returns what each got,
   * with when it was sent (ms after the start).
   */
  async function load({ rate, seconds, mix = 'mixed' }, scenario = async () => undefined) {
    const results = [];
    const started = performance.now();
    let sent = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let maxLag = 0;
    let running = true;
    // Its error, if any, is thrown once the requests it ran under have all ended.
    const scenarioDone = scenario(started).then(
      () => undefined,
      (err) => err,
    );
    void scenarioDone.then(() => (running = false));
    const pending = [];
    while (running || performance.now() - started < seconds * 1000) {
      const now = performance.now();
      const due = Math.floor(((now - started) / 1000) * rate);
      if (due > sent) maxLag = Math.max(maxLag, now - started - (sent / rate) * 1000);
      for (; sent < due; sent++) {
        const at = performance.now() - started;
        const signUpDue = performance.now() - lastSignUp > 6000;
        const run = signUpDue ? ((lastSignUp = performance.now()), signUp) : operation(mixes[mix]);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        pending.push(
          run()
            .then(
              (res) => results.push({ at, status: res.status }),
              (err) => results.push({ at, status: 'error', error: err.cause?.code ?? err.message }),
            )
            .finally(() => inFlight--),
        );
      }
      await sleep(5);
    }
    await Promise.all(pending);
    const failed = await scenarioDone;
    if (failed) throw failed;
    const elapsed = (performance.now() - started) / 1000;
    return { results, elapsed, rate: sent / elapsed, maxLag, maxInFlight };
  }

  return { send, signUp, createPlanet, seed, load };
}

/** Waits until `seconds` after `started` (a performance.now() value). */
export const at = (started, seconds) => sleep(Math.max(0, started + seconds * 1000 - performance.now()));

/** A 5xx, or a request that got no answer. */
export const isFailure = (r) => r.status === 'error' || r.status >= 500;

/**
 * What a load's requests got: the count of each status, the failures (isFailure), their
 * share, the time between the first and the last failed request's sending, and their errors.
 */
export function summarise(outcome) {
  const statuses = {};
  for (const r of outcome.results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const failures = outcome.results.filter(isFailure);
  const sentAt = failures.map((f) => f.at);
  return {
    requests: outcome.results.length,
    statuses,
    statusText: Object.entries(statuses)
      .map(([s, n]) => `${s}:${n}`)
      .join(' '),
    failures: failures.length,
    share: failures.length / Math.max(1, outcome.results.length),
    window: failures.length ? (Math.max(...sentAt) - Math.min(...sentAt)) / 1000 : 0,
    errors: [...new Set(failures.filter((f) => f.error).map((f) => f.error))].join(','),
  };
}

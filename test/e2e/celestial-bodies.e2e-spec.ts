import type { InjectOptions, Response } from 'light-my-request';
import { DataSource } from 'typeorm';

import { MAX_SATELLITES_PER_PLANET } from '../../src/celestial-bodies/celestial-body-types';
import { type TestApp, type TwoApps, twoInstances } from '../support/test-app';
import { usesPostgresServer } from '../support/test-database';
import { newUser, type UserFixture } from '../support/users';
import { createPlanet, expectProblem, ISO, startWithAliceAndBob } from './planets-support';

let t: TestApp;
let alice: UserFixture;
let bob: UserFixture;

beforeAll(async () => {
  ({ t, alice, bob } = await startWithAliceAndBob());
});
afterAll(async () => t?.close());

const request = (options: InjectOptions): Promise<Response> => t.request(options);

const create = (user: UserFixture | null, payload: unknown, headers: Record<string, string> = {}) =>
  request({
    method: 'POST',
    url: '/celestial-bodies',
    headers: { ...(user ? { authorization: user.bearer } : {}), ...headers },
    payload: payload as string,
  });

describe('POST /celestial-bodies', () => {
  it.each(['terrestrial', 'gas_giant', 'ice_giant', 'dwarf', 'super_earth'])(
    'creates a Planet for type %s',
    async (type) => {
      const res = await create(alice, { name: 'Kepler', type, habitabilityIndex: 0.3, tags: ['exoplanet'] });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        id: expect.any(Number),
        name: 'Kepler',
        description: null,
        type,
        habitabilityIndex: 0.3,
        atmosphere: [],
        image: null,
        satellites: [],
        creator: { id: alice.id, name: 'Alice' },
        tags: ['exoplanet'],
        lastUpdated: expect.stringMatching(ISO),
      });
      const listed = await request({ method: 'GET', url: `/planets/${res.json().id}` });
      expect(listed.json()).toEqual(res.json());
    },
  );

  it.each(['moon', 'asteroid', 'comet'])(
    'creates a Satellite for type %s, orbiting a planet of its creator',
    async (type) => {
      const planet = await createPlanet(t, alice, { name: 'Mars' });
      const res = await create(alice, {
        name: 'Phobos',
        description: 'Phobos is the larger and innermost of the two moons of Mars.',
        diameter: 22.2,
        type,
        orbit: { planet: { id: planet.id }, orbitalPeriod: 0.319, distance: 9376 },
      });
      expect(res.statusCode).toBe(201);
      const satellite = res.json();
      expect(satellite).toEqual({
        id: expect.any(Number),
        name: 'Phobos',
        description: 'Phobos is the larger and innermost of the two moons of Mars.',
        diameter: 22.2,
        type,
        orbit: { planet: { id: planet.id, name: 'Mars' }, orbitalPeriod: 0.319, distance: 9376 },
      });
      const refreshed = await request({ method: 'GET', url: `/planets/${planet.id}` });
      expect(refreshed.json().satellites).toEqual([satellite]);
    },
  );

  it('takes a Galaxy satellite as typed: its id ignored, orbit.planet a whole Planet of which only the id counts', async () => {
    const planet = await createPlanet(t, alice, { name: 'Mars' });
    const wholePlanet = {
      id: planet.id,
      name: 'Not its name',
      type: 'terrestrial',
      physicalProperties: { mass: 0.107, albedo: 0.25 },
      satellites: [],
      creator: { id: 1, name: 'Marc' },
      lastUpdated: '2024-01-15T14:30:00Z',
    };
    const res = await create(alice, { id: 0, name: 'Deimos', type: 'moon', orbit: { planet: wholePlanet } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      name: 'Deimos',
      description: null,
      type: 'moon',
      orbit: { planet: { id: planet.id, name: 'Mars' } },
    });
    expect(res.json().id).not.toBe(0);
  });

  it("refuses a satellite for another user's planet (403), and stores nothing", async () => {
    const planet = await createPlanet(t, alice, { name: 'Mars' });
    const res = await create(bob, { name: 'Intruder', type: 'moon', orbit: { planet: { id: planet.id } } });
    expect(expectProblem(res, 403).detail).toMatch(/Only the user who created this planet may .* add satellites/);
    expect((await request({ method: 'GET', url: `/planets/${planet.id}` })).json().satellites).toEqual([]);
  });

  it(`refuses a satellite past ${MAX_SATELLITES_PER_PLANET} on one planet with a 409, even when the adds race`, async () => {
    const planet = await createPlanet(t, alice, { name: 'Crowded' });
    const moon = (n: number) =>
      create(alice, { name: `Moon ${n}`, type: 'moon', orbit: { planet: { id: planet.id } } });
    for (let n = 1; n < MAX_SATELLITES_PER_PLANET - 2; n++) expect((await moon(n)).statusCode).toBe(201);
    // Eight adds at once for the last three places: each is counted after the one before it.
    const racing = await Promise.all([...Array(8).keys()].map((n) => moon(100 + n)));
    expect(racing.map((res) => res.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    const full = racing.find((res) => res.statusCode === 409)!;
    expect(expectProblem(full, 409)).toMatchObject({
      type: '/problems/satellite-limit',
      detail: `Planet ${planet.id} already has ${MAX_SATELLITES_PER_PLANET} satellites, the most a planet may have.`,
    });
    expect((await request({ method: 'GET', url: `/planets/${planet.id}` })).json().satellites).toHaveLength(
      MAX_SATELLITES_PER_PLANET,
    );
    // Another planet of the same user is not affected.
    const other = await createPlanet(t, alice, { name: 'Roomy' });
    expect((await create(alice, { name: 'Moon', type: 'moon', orbit: { planet: { id: other.id } } })).statusCode).toBe(
      201,
    );
  });

  it(`embeds at most ${MAX_SATELLITES_PER_PLANET} satellites in a planet, oldest first, even where the database holds more`, async () => {
    const planet = await createPlanet(t, alice, { name: 'Overgrown' });
    // Rows as a database from before the limit may hold them.
    await t.app
      .get(DataSource)
      .query(
        `INSERT INTO satellites (planet_id, name, type) SELECT $1, 'Moon ' || n, 'moon' FROM generate_series(1, 200) n`,
        [planet.id],
      );
    const names = [...Array(MAX_SATELLITES_PER_PLANET).keys()].map((n) => `Moon ${n + 1}`);
    const one = (await request({ method: 'GET', url: `/planets/${planet.id}` })).json();
    expect(one.satellites.map((s: { name: string }) => s.name)).toEqual(names);
    // The newest planet, so the last of the list.
    const { total } = (await request({ method: 'GET', url: '/planets?limit=1' })).json().meta;
    const [listed] = (await request({ method: 'GET', url: `/planets?limit=1&offset=${total - 1}` })).json().data;
    expect(listed.id).toBe(planet.id);
    expect(listed.satellites.map((s: { name: string }) => s.name)).toEqual(names);
    expectProblem(await create(alice, { name: 'One more', type: 'moon', orbit: { planet: { id: planet.id } } }), 409);
  });

  it('refuses a satellite without an orbit, saying that a satellite here must orbit a planet', async () => {
    const problem = expectProblem(await create(alice, { name: 'Adrift', type: 'asteroid' }), 400, 'orbit');
    expect(JSON.stringify(problem.errors)).toContain('must orbit a planet');
  });

  it('answers 404 for a satellite whose planet does not exist, and stores nothing', async () => {
    const dataSource = t.app.get(DataSource);
    const [{ count: before }] = await dataSource.query('SELECT count(*)::int AS count FROM satellites');
    const res = await create(alice, { name: 'Lost', type: 'moon', orbit: { planet: { id: 2147483647 } } });
    expect(expectProblem(res, 404).detail).toContain('orbit.planet.id');
    const [{ count: after }] = await dataSource.query('SELECT count(*)::int AS count FROM satellites');
    expect(after).toBe(before);
  });

  it.each([
    ['no type', { name: 'X' }, 'type'],
    ['an unknown type', { name: 'X', type: 'star' }, 'type'],
    ['a type that is not text', { name: 'X', type: 3 }, 'type'],
    ['a planet with an index of 1.5', { name: 'X', type: 'dwarf', habitabilityIndex: 1.5 }, 'habitabilityIndex'],
    [
      'a planet with a negative mass',
      { name: 'X', type: 'dwarf', physicalProperties: { mass: -2 } },
      'physicalProperties.mass',
    ],
    ['a planet with an orbit', { name: 'X', type: 'dwarf', orbit: { planet: { id: 1 } } }, 'orbit'],
    [
      'a planet with a callback URL',
      { name: 'X', type: 'dwarf', successCallbackUrl: 'https://example.com/hook' },
      'successCallbackUrl',
    ],
    ['a planet without a name', { type: 'dwarf' }, 'name'],
    ['a planet listing a satellite that is a number', { name: 'X', type: 'dwarf', satellites: [1] }, 'satellites'],
    [
      'a planet listing a satellite with a name that is not text',
      { name: 'X', type: 'dwarf', satellites: [{ name: 3 }] },
      'satellites.0.name',
    ],
    [
      'a planet listing a satellite of an unknown type',
      { name: 'X', type: 'dwarf', satellites: [{ name: 'Phobos', type: 'star' }] },
      'satellites.0.type',
    ],
    [
      'a planet listing a satellite with a field no Satellite has',
      { name: 'X', type: 'dwarf', satellites: [{ name: 'Phobos', mass: 1 }] },
      'satellites.0.mass',
    ],
    [
      'a planet listing a satellite whose orbit is a list',
      { name: 'X', type: 'dwarf', satellites: [{ name: 'Phobos', orbit: [] }] },
      'satellites.0.orbit',
    ],
    [
      `a planet listing more than ${MAX_SATELLITES_PER_PLANET} satellites`,
      { name: 'X', type: 'dwarf', satellites: Array(MAX_SATELLITES_PER_PLANET + 1).fill({ name: 'Phobos' }) },
      'satellites',
    ],
    ['a satellite without an orbit', { name: 'X', type: 'moon' }, 'orbit'],
    ['a satellite without its planet', { name: 'X', type: 'moon', orbit: {} }, 'orbit.planet'],
    [
      'a satellite with a planet id as text',
      { name: 'X', type: 'moon', orbit: { planet: { id: '1' } } },
      'orbit.planet.id',
    ],
    ['a satellite with a planet id of 0', { name: 'X', type: 'moon', orbit: { planet: { id: 0 } } }, 'orbit.planet.id'],
    [
      'a satellite with a planet id past the integer range',
      { name: 'X', type: 'moon', orbit: { planet: { id: 2147483648 } } },
      'orbit.planet.id',
    ],
    [
      'a satellite whose planet has a field no Planet has',
      { name: 'X', type: 'moon', orbit: { planet: { id: 1, name: 'Mars', moons: 2 } } },
      'orbit.planet.moons',
    ],
    [
      'a satellite with a negative diameter',
      { name: 'X', type: 'moon', diameter: -1, orbit: { planet: { id: 1 } } },
      'diameter',
    ],
    [
      'a satellite with a zero orbital period',
      { name: 'X', type: 'moon', orbit: { planet: { id: 1 }, orbitalPeriod: 0 } },
      'orbit.orbitalPeriod',
    ],
    [
      'a satellite with planet fields',
      { name: 'X', type: 'comet', habitabilityIndex: 0.5, orbit: { planet: { id: 1 } } },
      'habitabilityIndex',
    ],
    [
      'a satellite with a callback URL',
      { name: 'X', type: 'comet', failureCallbackUrl: 'https://example.com/hook', orbit: { planet: { id: 1 } } },
      'failureCallbackUrl',
    ],
    ['an orbit that is not an object', { name: 'X', type: 'moon', orbit: 'Mars' }, 'orbit'],
  ])('refuses %s with a 400 naming the field, never a 500', async (_, payload, field) => {
    expectProblem(await create(alice, payload), 400, field);
  });

  it('refuses a body that is not an object, and a missing body', async () => {
    expectProblem(await create(alice, [{ name: 'X', type: 'moon' }]), 400, 'body');
    expectProblem(await create(alice, 'null', { 'content-type': 'application/json' }), 400, 'body');
    expectProblem(
      await request({ method: 'POST', url: '/celestial-bodies', headers: { authorization: alice.basic } }),
      400,
      'body',
    );
    expectProblem(await create(alice, '{"type":', { 'content-type': 'application/json' }), 400);
  });

  it('needs a signed-in user (401)', async () => {
    expectProblem(await create(null, { name: 'X', type: 'dwarf' }), 401);
  });
});

describe('deleting a planet', () => {
  it("removes its satellites with it, and leaves other planets' satellites alone", async () => {
    const mars = await createPlanet(t, alice, { name: 'Mars' });
    const earth = await createPlanet(t, alice, { name: 'Earth' });
    for (const name of ['Phobos', 'Deimos'])
      await create(alice, { name, type: 'moon', orbit: { planet: { id: mars.id } } });
    await create(alice, { name: 'Moon', type: 'moon', orbit: { planet: { id: earth.id } } });

    const res = await request({
      method: 'DELETE',
      url: `/planets/${mars.id}`,
      headers: { authorization: alice.basic },
    });
    expect(res.statusCode).toBe(204);
    const left = await t.app
      .get(DataSource)
      .query('SELECT planet_id, name FROM satellites WHERE planet_id IN ($1, $2)', [mars.id, earth.id]);
    expect(left).toEqual([{ planet_id: earth.id, name: 'Moon' }]);
  });

  it('never answers 500 when satellites are added while their planet is being deleted', async () => {
    for (let round = 0; round < 5; round++) {
      const planet = await createPlanet(t, alice);
      const moon = (n: number) =>
        create(alice, { name: `Moon ${n}`, type: 'moon', orbit: { planet: { id: planet.id } } });
      const [deleted, ...added] = await Promise.all([
        moon(1),
        request({ method: 'DELETE', url: `/planets/${planet.id}`, headers: { authorization: alice.basic } }),
        moon(2),
        moon(3),
      ]).then(([a, d, b, c]) => [d, a, b, c]);
      expect(deleted.statusCode).toBe(204);
      for (const res of added) expect([201, 404]).toContain(res.statusCode);
      const [{ count }] = await t.app
        .get(DataSource)
        .query('SELECT count(*)::int AS count FROM satellites WHERE planet_id = $1', [planet.id]);
      expect(count).toBe(0);
    }
  });

  it('cannot be done by another user', async () => {
    const mars = await createPlanet(t, alice, { name: 'Mars' });
    await create(alice, { name: 'Phobos', type: 'moon', orbit: { planet: { id: mars.id } } });
    expectProblem(
      await request({ method: 'DELETE', url: `/planets/${mars.id}`, headers: { authorization: bob.basic } }),
      403,
    );
  });
});

/**
 * Two instances on one PostgreSQL server: each queues the adds for one planet in its own
 * process, so only the database's row lock keeps their counts from overlapping. The
 * embedded database serves one process only, so this runs in the PostgreSQL pass.
 */
(usesPostgresServer() ? describe : describe.skip)('satellites added through two instances at once', () => {
  let apps: TwoApps;
  beforeAll(async () => {
    apps = await twoInstances();
  });
  afterAll(async () => apps?.close());

  it(`never holds more than ${MAX_SATELLITES_PER_PLANET} on one planet`, async () => {
    const { a, b } = apps;
    const owner = await newUser(a, { name: 'Owner' });
    // A few rounds: without the row lock, overlapping counts show in most rounds, not in all.
    for (let round = 0; round < 4; round++) {
      const planet = await createPlanet(a, owner, { name: `Contested ${round}` });
      const moon = (via: TestApp, n: number) =>
        via.request({
          method: 'POST',
          url: '/celestial-bodies',
          headers: { authorization: owner.basic },
          payload: { name: `Moon ${n}`, type: 'moon', orbit: { planet: { id: planet.id } } },
        });
      for (let n = 1; n <= MAX_SATELLITES_PER_PLANET - 3; n++) expect((await moon(a, n)).statusCode).toBe(201);
      const racing = await Promise.all([...Array(12).keys()].map((n) => moon(n % 2 ? a : b, 100 + n)));
      expect(racing.map((res) => res.statusCode).sort()).toEqual([...Array(3).fill(201), ...Array(9).fill(409)]);
      const [{ count }] = await a.app
        .get(DataSource)
        .query('SELECT count(*)::int AS count FROM satellites WHERE planet_id = $1', [planet.id]);
      expect(count).toBe(MAX_SATELLITES_PER_PLANET);
    }
  });
});

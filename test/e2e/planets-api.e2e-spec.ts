import type { InjectOptions, Response } from 'light-my-request';
import { DataSource } from 'typeorm';

import type { TestApp } from '../support/test-app';
import type { UserFixture } from '../support/users';
import { createPlanet, createSatellite, expectProblem, ISO, multipart, startWithAliceAndBob } from './planets-support';

let t: TestApp;
let alice: UserFixture;
let bob: UserFixture;

beforeAll(async () => {
  ({ t, alice, bob } = await startWithAliceAndBob());
});
afterAll(async () => t?.close());

const request = (options: InjectOptions): Promise<Response> => t.request(options);

const FULL_PLANET = {
  name: 'Mars',
  description: 'The red planet',
  type: 'terrestrial',
  habitabilityIndex: 0.68,
  physicalProperties: { mass: 0.107, radius: 0.532, gravity: 0.378, temperature: { min: 130, max: 308, average: 210 } },
  atmosphere: [
    { compound: 'CO2', percentage: 95.3 },
    { compound: 'N2', percentage: 2.7 },
  ],
  discoveredAt: '1610-01-07T00:00:00Z',
  tags: ['solar-system', 'rocky', 'explored'],
};

const post = (user: UserFixture | null, payload: unknown, headers: Record<string, string> = {}) =>
  request({
    method: 'POST',
    url: '/planets',
    headers: { ...(user ? { authorization: user.basic } : {}), ...headers },
    payload: payload as string,
  });
const put = (user: UserFixture | null, id: number | string, payload: unknown) =>
  request({
    method: 'PUT',
    url: `/planets/${id}`,
    headers: user ? { authorization: user.bearer } : {},
    payload: payload as string,
  });
const del = (user: UserFixture | null, id: number | string) =>
  request({ method: 'DELETE', url: `/planets/${id}`, headers: user ? { authorization: user.basic } : {} });
const get = (url: string) => request({ method: 'GET', url });

async function deleteAllPlanets(): Promise<void> {
  await t.app.get(DataSource).query('DELETE FROM planets');
}

describe('POST /planets', () => {
  it('creates a planet with every Galaxy field, owned by the caller, with a Location', async () => {
    const res = await post(alice, FULL_PLANET);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`http://localhost:80/planets/${body.id}`);
    expect(body).toEqual({
      ...FULL_PLANET,
      id: expect.any(Number),
      discoveredAt: '1610-01-07T00:00:00.000Z',
      image: null,
      satellites: [],
      creator: { id: alice.id, name: 'Alice' },
      lastUpdated: expect.stringMatching(ISO),
    });
    expect((await get(`/planets/${body.id}`)).json()).toEqual(body);
  });

  it('needs only a name (the Galaxy requires nothing else), and accepts a Bearer token', async () => {
    const res = await request({
      method: 'POST',
      url: '/planets',
      headers: { authorization: alice.bearer },
      payload: { name: '  HD 40307g  ' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      name: 'HD 40307g',
      description: null,
      atmosphere: [],
      image: null,
      satellites: [],
      creator: { id: alice.id, name: 'Alice' },
      tags: [],
      lastUpdated: expect.stringMatching(ISO),
    });
  });

  it('refuses a caller without valid credentials (401)', async () => {
    expectProblem(await post(null, FULL_PLANET), 401);
    expectProblem(await post(null, FULL_PLANET, { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' }), 401);
    expectProblem(await post(null, FULL_PLANET, { authorization: 'Bearer not.a.token' }), 401);
  });

  it.each([
    ['an index of 1.5', { habitabilityIndex: 1.5 }, 'habitabilityIndex'],
    ['a negative index', { habitabilityIndex: -0.1 }, 'habitabilityIndex'],
    ['an index given as text', { habitabilityIndex: '0.5' }, 'habitabilityIndex'],
    ['a negative mass', { physicalProperties: { mass: -1 } }, 'physicalProperties.mass'],
    ['a mass of zero', { physicalProperties: { mass: 0 } }, 'physicalProperties.mass'],
    ['a radius of zero', { physicalProperties: { radius: 0 } }, 'physicalProperties.radius'],
    ['a negative gravity', { physicalProperties: { gravity: -1 } }, 'physicalProperties.gravity'],
    [
      'a temperature below absolute zero',
      { physicalProperties: { temperature: { min: -1 } } },
      'physicalProperties.temperature.min',
    ],
    [
      'a maximum below the minimum',
      { physicalProperties: { temperature: { min: 300, max: 200 } } },
      'physicalProperties.temperature.max',
    ],
    [
      'an average above the maximum',
      { physicalProperties: { temperature: { max: 200, average: 250 } } },
      'physicalProperties.temperature.average',
    ],
    [
      'a further measurement that is not a number',
      { physicalProperties: { density: '3.9' } },
      'physicalProperties.extra',
    ],
    ['a further measurement named with markup', { physicalProperties: { '<b>': 1 } }, 'physicalProperties.extra'],
    [
      '21 further measurements',
      { physicalProperties: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`m${i}`, i])) },
      'physicalProperties.extra',
    ],
    ['physical properties that are a list', { physicalProperties: [1] }, 'physicalProperties'],
    ['an unknown type', { type: 'gas' }, 'type'],
    ['a satellite type', { type: 'moon' }, 'type'],
    ['a percentage over 100', { atmosphere: [{ compound: 'N2', percentage: 100.5 }] }, 'atmosphere.0.percentage'],
    ['a negative percentage', { atmosphere: [{ compound: 'N2', percentage: -1 }] }, 'atmosphere.0.percentage'],
    ['a gas without its compound', { atmosphere: [{ percentage: 5 }] }, 'atmosphere.0.compound'],
    ['an atmosphere that is not a list', { atmosphere: { compound: 'N2', percentage: 5 } }, 'atmosphere'],
    ['a date that is not a date-time', { discoveredAt: 'yesterday' }, 'discoveredAt'],
    ['a date without a time', { discoveredAt: '1610-01-07' }, 'discoveredAt'],
    ['a 30th of February', { discoveredAt: '2023-02-30T00:00:00Z' }, 'discoveredAt'],
    ['year zero', { discoveredAt: '0000-01-01T00:00:00Z' }, 'discoveredAt'],
    ['tags that are not a list', { tags: 'rocky' }, 'tags'],
    ['a duplicate tag', { tags: ['rocky', 'rocky'] }, 'tags'],
    ['an empty tag', { tags: [''] }, 'tags'],
    ['too many tags', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
    ['an empty name', { name: '   ' }, 'name'],
    ['a name that is not text', { name: 42 }, 'name'],
    ['a 101-character name', { name: 'x'.repeat(101) }, 'name'],
    ['a null name', { name: null }, 'name'],
    ['a description over 2000 characters', { description: 'x'.repeat(2001) }, 'description'],
    ['an unknown field', { moons: 2 }, 'moons'],
    [
      'the Galaxy success callback URL (not supported)',
      { successCallbackUrl: 'https://example.com/webhook' },
      'successCallbackUrl',
    ],
    [
      'the Galaxy failure callback URL (not supported)',
      { failureCallbackUrl: 'https://example.com/webhook' },
      'failureCallbackUrl',
    ],
    ['an id that is not an integer', { id: '7' }, 'id'],
    ['a creator with an unknown field', { creator: { id: 1, email: 'a@example.com' } }, 'creator.email'],
    ['a lastUpdated that is not a date-time', { lastUpdated: 'yesterday' }, 'lastUpdated'],
    ['a NUL character', { description: 'a\u0000b' }, 'description'],
  ])('refuses %s with a 400 naming the field', async (_, change, field) => {
    const res = await post(alice, { ...FULL_PLANET, ...change });
    expectProblem(res, 400, field);
  });

  it("takes a Planet as the Galaxy types it: the server's fields ignored, further measurements kept", async () => {
    const galaxyPlanet = {
      ...FULL_PLANET,
      id: 0,
      physicalProperties: { ...FULL_PLANET.physicalProperties, albedo: 0.25, magnetic_field: -3.5e-5 },
      image: 'https://cdn.example/mars.jpg',
      satellites: [{ id: 9, name: 'Phobos' }],
      creator: { id: 12345, name: 'Marc' },
      lastUpdated: '2024-01-15T14:30:00Z',
    };
    const res = await post(alice, galaxyPlanet);
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.id).toBeGreaterThan(0);
    expect(created).toMatchObject({ image: null, satellites: [], creator: { id: alice.id, name: 'Alice' } });
    expect(created.lastUpdated).not.toBe('2024-01-15T14:30:00Z');
    const read = (await get(`/planets/${created.id}`)).json();
    expect(read.physicalProperties).toEqual({
      ...FULL_PLANET.physicalProperties,
      albedo: 0.25,
      magnetic_field: -3.5e-5,
    });
  });

  it('refuses a further measurement past the largest double (JSON reads it as Infinity)', async () => {
    const res = await post(alice, '{"name":"Mars","physicalProperties":{"density":1e400}}', {
      'content-type': 'application/json',
    });
    expectProblem(res, 400, 'physicalProperties.extra');
  });

  it('refuses a callback URL, saying why', async () => {
    const problem = expectProblem(await post(alice, { ...FULL_PLANET, successCallbackUrl: 'https://x.example' }), 400);
    expect(JSON.stringify(problem.errors)).toContain('successCallbackUrl is not supported');
  });

  it('refuses a body without a name', async () => {
    const { name: _, ...withoutName } = FULL_PLANET;
    expectProblem(await post(alice, withoutName), 400, 'name');
  });

  it('refuses a body that is not a JSON object, or not JSON at all', async () => {
    expectProblem(await post(alice, [FULL_PLANET]), 400, 'body');
    expectProblem(await post(alice, '{"name": ', { 'content-type': 'application/json' }), 400, 'body');
    expectProblem(await post(alice, 'name=Mars', { 'content-type': 'text/plain' }), 415);
  });

  it('answers a multipart body with 415, as before uploads existed, and creates nothing', async () => {
    const form = multipart([{ name: 'name', content: 'Mars' }]);
    expectProblem(await post(alice, form.payload, form.headers), 415);
    expectProblem(
      await request({
        method: 'PUT',
        url: '/planets/1',
        headers: { authorization: alice.basic, ...form.headers },
        payload: form.payload,
      }),
      415,
    );
  });

  it('still refuses JSON bodies over 64 KiB (413)', async () => {
    const res = await post(alice, { ...FULL_PLANET, description: 'x'.repeat(70 * 1024) });
    expectProblem(res, 413);
  });
});

describe('GET /planets/{planetId}', () => {
  it('returns the planet with its satellites, oldest first', async () => {
    const planet = await createPlanet(t, alice, FULL_PLANET);
    const phobos = await createSatellite(t, alice, planet.id, {
      name: 'Phobos',
      diameter: 22.2,
      orbit: { planet: { id: planet.id }, orbitalPeriod: 0.319, distance: 9376 },
    });
    const deimos = await createSatellite(t, alice, planet.id, { name: 'Deimos' });
    const res = await get(`/planets/${planet.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().satellites).toEqual([
      {
        id: phobos.id,
        name: 'Phobos',
        description: null,
        diameter: 22.2,
        type: 'moon',
        orbit: { planet: { id: planet.id, name: 'Mars' }, orbitalPeriod: 0.319, distance: 9376 },
      },
      {
        id: deimos.id,
        name: 'Deimos',
        description: null,
        type: 'moon',
        orbit: { planet: { id: planet.id, name: 'Mars' } },
      },
    ]);
  });

  it('answers 404 for a planet that does not exist', async () => {
    expectProblem(await get('/planets/2147483647'), 404);
  });

  it.each(['abc', '0', '-1', '1.5', '01', '1e3', '0x1', '2147483648', '99999999999999999999'])(
    'answers 400 for the planetId %s',
    async (id) => {
      expectProblem(await get(`/planets/${id}`), 400, 'planetId');
    },
  );
});

describe('GET /planets', () => {
  beforeAll(async () => {
    await deleteAllPlanets();
  });

  it('answers an empty list with meta and pagination headers', async () => {
    const res = await get('/planets');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], meta: { limit: 10, offset: 0, total: 0, next: null } });
    expect(res.headers).toMatchObject({
      'x-pagination-total': '0',
      'x-pagination-page': '1',
      'x-pagination-per-page': '10',
    });
  });

  describe('with 25 planets', () => {
    let ids: number[];
    beforeAll(async () => {
      ids = [];
      for (let i = 1; i <= 25; i++) ids.push((await createPlanet(t, i % 2 ? alice : bob, { name: `Planet ${i}` })).id);
    });

    it('pages by id, with next, until the last page', async () => {
      const first = await get('/planets');
      expect(first.json().data.map((p: { id: number }) => p.id)).toEqual(ids.slice(0, 10));
      expect(first.json().meta).toEqual({
        limit: 10,
        offset: 0,
        total: 25,
        next: 'http://localhost:80/planets?limit=10&offset=10',
      });
      const second = await get(first.json().meta.next);
      expect(second.json().data.map((p: { id: number }) => p.id)).toEqual(ids.slice(10, 20));
      expect(second.headers).toMatchObject({
        'x-pagination-total': '25',
        'x-pagination-page': '2',
        'x-pagination-per-page': '10',
      });
      const last = await get(second.json().meta.next);
      expect(last.json().data.map((p: { id: number }) => p.id)).toEqual(ids.slice(20));
      expect(last.json().meta).toEqual({ limit: 10, offset: 20, total: 25, next: null });
      expect(last.headers['x-pagination-page']).toBe('3');
    });

    it('gives next null on a last page that is exactly full', async () => {
      const res = await get('/planets?limit=5&offset=20');
      expect(res.json().data).toHaveLength(5);
      expect(res.json().meta.next).toBeNull();
    });

    it('takes limit 1 and limit 100', async () => {
      expect((await get('/planets?limit=1')).json().data.map((p: { id: number }) => p.id)).toEqual([ids[0]]);
      const all = await get('/planets?limit=100');
      expect(all.json().data).toHaveLength(25);
      expect(all.json().meta.next).toBeNull();
    });

    it('answers an offset past the end with an empty page, not an error', async () => {
      for (const offset of [25, 1000]) {
        const res = await get(`/planets?offset=${offset}`);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ data: [], meta: { limit: 10, offset, total: 25, next: null } });
      }
    });

    it('lists each planet with its creator', async () => {
      const data = (await get('/planets?limit=2')).json().data;
      expect(data.map((p: { creator: unknown }) => p.creator)).toEqual([
        { id: alice.id, name: 'Alice' },
        { id: bob.id, name: 'Bob' },
      ]);
    });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=abc', 'offset'],
    ['offset=1e3', 'offset'],
    ['offset=99999999999', 'offset'],
    ['page=2', 'page'],
  ])('answers ?%s with a 400 naming the parameter', async (query, field) => {
    expectProblem(await get(`/planets?${query}`), 400, field);
  });

  it.each([
    ['11 digits', '99999999999'],
    ['20 digits', '99999999999999999999'],
    ['400 digits', '9'.repeat(400)],
  ])('says an offset of %s is too large, not that it is no integer', async (_label, offset) => {
    const problem = expectProblem(await get(`/planets?offset=${offset}`), 400, 'offset');
    expect(problem.errors).toEqual([{ field: 'offset', message: 'offset must not be greater than 2147483647' }]);
  });

  it('says a parameter given twice is to be given once', async () => {
    const problem = expectProblem(await get('/planets?limit=5&limit=2&offset=1'), 400, 'limit');
    expect(problem.errors).toEqual([{ field: 'limit', message: 'limit must be given once' }]);
  });

  it.each(['101', '1000', '99999999999999999999'])(
    'serves ?limit=%s as 100, and says so in meta.limit and X-Pagination-Per-Page',
    async (limit) => {
      const res = await get(`/planets?limit=${limit}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().meta.limit).toBe(100);
      expect(res.headers['x-pagination-per-page']).toBe('100');
    },
  );
});

describe('PUT /planets/{planetId}', () => {
  it('takes the planet as read back, its own id included, and refuses another id', async () => {
    const planet = await createPlanet(t, alice, FULL_PLANET);
    const read = (await get(`/planets/${planet.id}`)).json();
    const res = await put(alice, planet.id, { ...read, name: 'Mars II' });
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe('Mars II');
    const problem = expectProblem(await put(alice, planet.id, { ...read, id: planet.id + 1 }), 400, 'id');
    expect(JSON.stringify(problem.errors)).toContain(`id must be ${planet.id}`);
    expect((await get(`/planets/${planet.id}`)).json().name).toBe('Mars II');
  });

  it('lets the creator replace the planet; what the body leaves out is cleared', async () => {
    const planet = await createPlanet(t, alice, FULL_PLANET);
    const moon = await createSatellite(t, alice, planet.id);
    const res = await put(alice, planet.id, { name: 'Mars II', type: 'dwarf', tags: ['renamed'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: planet.id,
      name: 'Mars II',
      description: null,
      type: 'dwarf',
      atmosphere: [],
      image: null,
      satellites: [expect.objectContaining({ id: moon.id, orbit: { planet: { id: planet.id, name: 'Mars II' } } })],
      creator: { id: alice.id, name: 'Alice' },
      tags: ['renamed'],
      lastUpdated: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.json().lastUpdated)).toBeGreaterThanOrEqual(Date.parse(planet.lastUpdated));
    expect((await get(`/planets/${planet.id}`)).json()).toEqual(res.json());
  });

  it('refuses another user (403) and leaves the planet unchanged', async () => {
    const planet = await createPlanet(t, alice, FULL_PLANET);
    expectProblem(await put(bob, planet.id, { name: 'Stolen' }), 403);
    expect((await get(`/planets/${planet.id}`)).json()).toEqual(planet);
  });

  it('answers 404 for a missing planet, 400 for a bad id or body, 401 without credentials', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await put(alice, 2147483647, { name: 'Nowhere' }), 404);
    expectProblem(await put(alice, 'abc', { name: 'Nowhere' }), 400, 'planetId');
    expectProblem(await put(alice, planet.id, { name: 'Mars', habitabilityIndex: 1.5 }), 400, 'habitabilityIndex');
    expectProblem(
      await put(alice, planet.id, { name: 'Mars', successCallbackUrl: 'https://example.com' }),
      400,
      'successCallbackUrl',
    );
    expectProblem(await put(alice, planet.id, {}), 400, 'name');
    expectProblem(await put(null, planet.id, { name: 'Mars' }), 401);
  });
});

describe('DELETE /planets/{planetId}', () => {
  it('lets the creator delete the planet (204), after which it is gone', async () => {
    const planet = await createPlanet(t, alice);
    const res = await del(alice, planet.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await get(`/planets/${planet.id}`), 404);
    expectProblem(await del(alice, planet.id), 404);
  });

  it('refuses another user (403) and keeps the planet', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await del(bob, planet.id), 403);
    expect((await get(`/planets/${planet.id}`)).statusCode).toBe(200);
  });

  it('answers 400 for a bad id and 401 without credentials', async () => {
    expectProblem(await del(alice, '-5'), 400, 'planetId');
    expectProblem(await del(null, 1), 401);
  });
});

describe('the SQL of a list page', () => {
  /** Counts the statements the DataSource sends while `action` runs. */
  async function countQueries(action: () => Promise<unknown>): Promise<string[]> {
    const dataSource = t.app.get(DataSource);
    const queries: string[] = [];
    const counter = { beforeQuery: (event: { query: string }) => void queries.push(event.query) };
    dataSource.subscribers.push(counter);
    try {
      await action();
    } finally {
      dataSource.subscribers.splice(dataSource.subscribers.indexOf(counter), 1);
    }
    return queries;
  }

  it('is a fixed number of queries, the same for 1 planet as for 100 with satellites', async () => {
    await deleteAllPlanets();
    const dataSource = t.app.get(DataSource);
    // Set up in bulk, straight in SQL: 100 planets by two creators, two satellites each.
    await dataSource.query(
      `INSERT INTO planets (name, extra_measurements, atmosphere, tags, creator_id)
       SELECT 'Planet ' || n, '{}', '[]', '{}', CASE WHEN n % 2 = 0 THEN $1::int ELSE $2::int END FROM generate_series(1, 100) AS n`,
      [alice.id, bob.id],
    );
    await dataSource.query(
      `INSERT INTO satellites (planet_id, name, type) SELECT id, name || ' ' || m, 'moon' FROM planets, generate_series(1, 2) AS m`,
    );

    let page: Response | undefined;
    const forHundred = await countQueries(async () => (page = await get('/planets?limit=100')));
    expect(page!.json().data).toHaveLength(100);
    expect(
      page!
        .json()
        .data.every(
          (p: { satellites: unknown[]; creator: { name: string } }) => p.satellites.length === 2 && p.creator.name,
        ),
    ).toBe(true);
    const forOne = await countQueries(() => get('/planets?limit=1'));

    expect(forHundred).toHaveLength(4);
    expect(forOne).toHaveLength(forHundred.length);
    // Neither image bytes nor anything of the creator beyond id and name are read.
    expect(forHundred.join('\n')).not.toMatch(/"data"|password_hash|email/);
  });
});

describe('OpenAPI document', () => {
  it('documents every celestial-body operation with its Galaxy operationId, tag, security and responses', async () => {
    const doc = (await get('/docs-json')).json();
    const user = [{ basicAuth: [] }, { bearerAuth: [] }];
    const auth = ['401', '429'];
    // A create retried with Idempotency-Key: 409 while the first is running, 422 for another body.
    const retried = ['409', '422'];
    const operations = [
      ['/planets', 'get', 'getAllData', 'Planets', [], ['200', '400', '503']],
      ['/planets', 'post', 'createPlanet', 'Planets', user, ['201', '400', '413', '415', '503', ...auth, ...retried]],
      ['/planets/{planetId}', 'get', 'getPlanet', 'Planets', [], ['200', '304', '400', '404', '412', '503']],
      [
        '/planets/{planetId}',
        'put',
        'updatePlanet',
        'Planets',
        user,
        ['200', '400', '403', '404', '412', '413', '415', '503', ...auth],
      ],
      [
        '/planets/{planetId}',
        'delete',
        'deletePlanet',
        'Planets',
        user,
        ['204', '400', '403', '404', '412', '413', '415', '503', ...auth],
      ],
      [
        '/planets/{planetId}/image',
        'post',
        'uploadImage',
        'Planets',
        user,
        ['200', '400', '403', '404', '408', '413', '415', '503', ...auth, ...retried],
      ],
      ['/planets/{planetId}/image', 'get', 'getPlanetImage', 'Planets', [], ['200', '304', '400', '404', '412', '503']],
      [
        '/celestial-bodies',
        'post',
        'createCelestialBody',
        'Celestial Bodies',
        user,
        ['201', '400', '403', '404', '413', '415', '503', ...auth, ...retried],
      ],
    ] as const;
    for (const [path, method, operationId, tag, security, statuses] of operations) {
      const operation = doc.paths[path][method];
      expect({
        path,
        method,
        operationId: operation.operationId,
        tags: operation.tags,
        security: operation.security,
      }).toEqual({
        path,
        method,
        operationId,
        tags: [tag],
        security,
      });
      expect({ operationId, statuses: Object.keys(operation.responses).sort() }).toEqual({
        operationId,
        statuses: [...statuses].sort(),
      });
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect(operation.responses[status].content['application/problem+json'].schema).toEqual({
          $ref: '#/components/schemas/Problem',
        });
      }
    }
  });

  it('declares no Galaxy callback URL anywhere, and the celestial body as a oneOf told apart by type', async () => {
    const doc = (await get('/docs-json')).json();
    // Refused by name, and said so in the operations' descriptions, but no schema offers them.
    expect(JSON.stringify(doc.components.schemas)).not.toMatch(/CallbackUrl/);
    const body = doc.paths['/celestial-bodies'].post.requestBody.content['application/json'].schema;
    expect(body.oneOf).toEqual([
      { $ref: '#/components/schemas/PlanetBodyInput' },
      { $ref: '#/components/schemas/SatelliteInput' },
    ]);
    expect(body.discriminator.propertyName).toBe('type');
    expect(Object.keys(body.discriminator.mapping).sort()).toEqual([
      'asteroid',
      'comet',
      'dwarf',
      'gas_giant',
      'ice_giant',
      'moon',
      'super_earth',
      'terrestrial',
    ]);
    expect(
      doc.paths['/planets/{planetId}/image'].post.requestBody.content['multipart/form-data'].schema.required,
    ).toEqual(['image']);
  });

  it('sends a planet made without a type without one, so Planet does not require it; a created celestial body always has one', async () => {
    await deleteAllPlanets();
    const created = await post(alice, { name: 'Untyped' });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();
    const [listed] = (await get('/planets')).json().data;
    for (const planet of [created.json(), (await get(`/planets/${id}`)).json(), listed]) {
      expect(planet).toEqual(expect.objectContaining({ id, name: 'Untyped' }));
      expect(planet).not.toHaveProperty('type');
    }

    const doc = (await get('/docs-json')).json();
    const { Planet, PlanetBody } = doc.components.schemas;
    expect(Planet.properties.type).toEqual({
      example: 'terrestrial',
      allOf: [{ $ref: '#/components/schemas/PlanetType' }],
    });
    expect(Planet.required).not.toContain('type');
    expect(PlanetBody.required).toContain('type');
    expect(PlanetBody.properties).toEqual({ ...Planet.properties, type: Planet.properties.type });
    // Each discriminator maps to schemas that require `type`: never to Planet.
    const schemaOf = (content: any) => content['application/json'].schema;
    const createBody = doc.paths['/celestial-bodies'].post;
    for (const [union, planetSchema, satelliteSchema] of [
      [schemaOf(createBody.requestBody.content), 'PlanetBodyInput', 'SatelliteInput'],
      [schemaOf(createBody.responses['201'].content), 'PlanetBody', 'Satellite'],
    ]) {
      const refs = [planetSchema, satelliteSchema].map((name) => `#/components/schemas/${name}`);
      expect(union.oneOf).toEqual(refs.map(($ref) => ({ $ref })));
      expect(new Set(Object.values(union.discriminator.mapping))).toEqual(new Set(refs));
      for (const name of [planetSchema, satelliteSchema])
        expect(doc.components.schemas[name].required).toContain('type');
    }
  });
});

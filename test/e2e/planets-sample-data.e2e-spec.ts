import { DataSource } from 'typeorm';

import { startTestApp, TestApp } from '../support/test-app';
import { createPersistentTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';
import { newUser } from '../support/users';

async function listPlanets(t: TestApp) {
  const res = await t.request({ method: 'GET', url: '/planets?limit=100' });
  expect(res.statusCode).toBe(200);
  return res.json().data as { id: number; name: string; creator: { name: string }; satellites: { name: string }[] }[];
}

let database: TestDatabase;
let t: TestApp | undefined;

beforeEach(async () => {
  database = await createPersistentTestDatabase();
});
afterEach(async () => {
  await t?.close();
  t = undefined;
  await database.drop();
});

async function start(seed: string): Promise<TestApp> {
  await t?.close();
  t = await startTestApp({ SEED_SAMPLE_DATA: seed }, database);
  return t;
}

it('with SEED_SAMPLE_DATA=true, a fresh database gets sample planets with satellites, once, and nobody can sign in as their user', async () => {
  let app = await start('true');
  const planets = await listPlanets(app);
  expect(planets.map((p) => p.name)).toEqual(['Mars', 'Earth', 'Jupiter', 'Neptune', 'Pluto', 'HD 40307g']);
  expect(planets.every((p) => p.creator.name === 'Galaxy samples')).toBe(true);
  expect(planets[0].satellites.map((s) => s.name)).toEqual(['Phobos', 'Deimos']);

  for (const password of ['', '!unusable', 'password']) {
    const res = await app.request({
      method: 'POST',
      url: '/auth/token',
      payload: { email: 'samples@galaxy.invalid', password },
    });
    expect([400, 401]).toContain(res.statusCode);
  }
  const signup = await app.request({
    method: 'POST',
    url: '/user/signup',
    payload: { email: 'samples@galaxy.invalid', password: 'long-enough-password' },
  });
  expect(signup.statusCode).toBe(409);

  // Samples someone removed stay removed, and nothing is added twice.
  await app.app.get(DataSource).query(`DELETE FROM planets WHERE name = 'Pluto'`);
  app = await start('true');
  expect((await listPlanets(app)).map((p) => p.name)).toEqual(['Mars', 'Earth', 'Jupiter', 'Neptune', 'HD 40307g']);
});

it('unset, seeds the embedded database while it has no planets, and never a PostgreSQL server', async () => {
  const app = await start('');
  if (usesPostgresServer()) {
    expect(await listPlanets(app)).toEqual([]);
    return;
  }
  expect(await listPlanets(app)).toHaveLength(6);
});

it('with SEED_SAMPLE_DATA=false, adds nothing; unset, leaves an embedded database that already has planets alone', async () => {
  let app = await start('false');
  expect(await listPlanets(app)).toEqual([]);
  const user = await newUser(app);
  await app.request({
    method: 'POST',
    url: '/planets',
    headers: { authorization: user.basic },
    payload: { name: 'Mine' },
  });
  app = await start('');
  expect((await listPlanets(app)).map((p) => p.name)).toEqual(['Mine']);
});

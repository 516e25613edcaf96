import type { InjectOptions, Response } from 'light-my-request';

import { startTestApp, TestApp } from '../support/test-app';
import { newUser, UserFixture } from '../support/users';
import { createPlanet, expectProblem } from './planets-support';

// Bodies a hostile-input review found accepted (and stored wrongly) by POST/PUT /planets
// and POST /celestial-bodies.

let t: TestApp;
let request: (options: InjectOptions) => Promise<Response>;
let alice: UserFixture;
let marsId: number;

beforeAll(async () => {
  t = await startTestApp();
  request = (options) => t.request(options);
  alice = await newUser(t, { name: 'Alice' });
  marsId = (await createPlanet(t, alice)).id;
});
afterAll(async () => t?.close());

const send = (method: 'POST' | 'PUT', url: string, payload: object) =>
  request({ method, url, headers: { authorization: alice.basic }, payload: payload });

/** The same planet body through each route that takes one. */
const PLANET_ROUTES: [string, (body: object) => Promise<Response>][] = [
  ['POST /planets', (body) => send('POST', '/planets', { name: 'N', ...body })],
  ['PUT /planets/{id}', (body) => send('PUT', `/planets/${marsId}`, { name: 'N', ...body })],
  ['POST /celestial-bodies', (body) => send('POST', '/celestial-bodies', { name: 'N', type: 'terrestrial', ...body })],
];

describe.each(PLANET_ROUTES)('%s', (_, submit) => {
  it.each([
    ['an atmosphere element that is an empty list', { atmosphere: [[]] }, 'atmosphere'],
    [
      'an atmosphere element that is a list of gases',
      { atmosphere: [[{ compound: 'x', percentage: 1 }]] },
      'atmosphere',
    ],
    ['a gas next to a list', { atmosphere: [{ compound: 'x', percentage: 1 }, []] }, 'atmosphere'],
    ['a null gas', { atmosphere: [null] }, 'atmosphere'],
    ['physical properties that are a list of objects', { physicalProperties: [{ mass: 1 }] }, 'physicalProperties'],
    [
      'a temperature that is a list',
      { physicalProperties: { temperature: [{ min: 1 }] } },
      'physicalProperties.temperature',
    ],
  ])('refuses %s (400 naming the field)', async (_, body, field) => {
    expectProblem(await submit(body), 400, field);
  });

  // Only description declares null; leaving a field out is how a client says "none".
  it.each([
    ['habitabilityIndex', { habitabilityIndex: null }],
    ['physicalProperties', { physicalProperties: null }],
    ['physicalProperties.temperature', { physicalProperties: { temperature: null } }],
    ['physicalProperties.temperature.min', { physicalProperties: { temperature: { min: null } } }],
    ['physicalProperties.mass', { physicalProperties: { mass: null } }],
    ['atmosphere', { atmosphere: null }],
    ['discoveredAt', { discoveredAt: null }],
    ['tags', { tags: null }],
  ])('refuses null for %s, which the schema does not declare nullable', async (field, body) => {
    expectProblem(await submit(body), 400, field);
  });

  it.each([
    ['rolls into the year 10000 in UTC', '9999-12-31T23:59:59-14:00'],
    ['falls in the year 0 in UTC', '0001-01-01T00:00:00+14:00'],
  ])('refuses a discoveredAt that %s', async (_, discoveredAt) => {
    expectProblem(await submit({ discoveredAt }), 400, 'discoveredAt');
  });
});

describe('discoveredAt at the edges of the range', () => {
  it.each([
    ['9999-12-31T23:59:59+14:00', '9999-12-31T09:59:59.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T00:00:00-14:00', '0001-01-01T14:00:00.000Z'],
  ])('stores %s as %s, which the API takes back', async (sent, served) => {
    const created = await createPlanet(t, alice, { discoveredAt: sent });
    expect(created.discoveredAt).toBe(served);
    const res = await send('PUT', `/planets/${created.id}`, { name: 'Back', discoveredAt: created.discoveredAt });
    expect(res.statusCode).toBe(200);
    expect(res.json().discoveredAt).toBe(served);
  });
});

describe('POST /celestial-bodies (satellite)', () => {
  const satellite = (body: object) =>
    send('POST', '/celestial-bodies', { name: 'S', type: 'moon', orbit: { planet: { id: marsId } }, ...body });

  it.each([
    ['an orbit that is a list', { orbit: [{ planet: { id: 1 } }] }, 'orbit'],
    ['an orbited planet that is a list', { orbit: { planet: [{ id: 1 }] } }, 'orbit.planet'],
    ['a null orbit', { orbit: null }, 'orbit'],
    ['a null orbited planet', { orbit: { planet: null } }, 'orbit.planet'],
    ['a null diameter', { diameter: null }, 'diameter'],
    ['a null orbital period', { orbit: { planet: { id: 1 }, orbitalPeriod: null } }, 'orbit.orbitalPeriod'],
    ['a null distance', { orbit: { planet: { id: 1 }, distance: null } }, 'orbit.distance'],
  ])('refuses %s (400 naming the field)', async (_, body, field) => {
    expectProblem(await satellite(body), 400, field);
  });

  it('still takes a null description, which the schema declares', async () => {
    expect((await satellite({ description: null })).statusCode).toBe(201);
  });
});

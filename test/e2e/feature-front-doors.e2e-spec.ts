import { jest } from '@jest/globals';
import { Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { ApiOkResponse, ApiParam } from '@nestjs/swagger';
import type { Response } from 'light-my-request';
import { DataSource } from 'typeorm';

// What a new feature would import: other features only through their front doors (index.ts).
import { type AuthenticatedUser, CurrentUser, UserAuth } from '../../src/auth';
import { CelestialBodiesModule, PLANET_ID_PARAM, PlanetId, PlanetsLookup } from '../../src/celestial-bodies';
import { ClockModule } from '../../src/common/clock/clock.module';
import { MetricsModule } from '../../src/common/metrics/metrics.module';
import { NOT_FOUND, VALIDATION } from '../../src/common/problem';
import { ApiProblems } from '../../src/common/swagger';
import { ConfigModule, loadConfig } from '../../src/config';
import { managerOf } from '../../src/database';
import { DatabaseModule } from '../../src/database/database.module';
import { FEATURE_SETTINGS } from '../../src/feature-settings';
import {
  CurrentRegion,
  RegionKeyAuth,
  RegionKeysModule,
  RegionKeysService,
  type RegionPrincipal,
} from '../../src/region-keys';
// Test-only: a key in the issued format that no region holds.
import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { expectProblem } from '../support/problems';
import { newRegion, type RegionFixture, startTestApp, TEST_ENV, type TestApp } from '../support/test-app';
import { createTestDatabase } from '../support/test-database';
import { newUser, type UserFixture } from '../support/users';
import { createPlanet } from './planets-support';

/**
 * A new feature uses the others through their index.ts alone, with no change to them: the
 * app boots with two small modules of this file beside its own. ProbeModule imports
 * CelestialBodiesModule and RegionKeysModule, which the app imports too (one instance each,
 * one set of routes); BareModule imports nothing and still uses @RegionKeyAuth(permission)
 * and @UserAuth().
 */

const OBJECT = { schema: { type: 'object' } } as const;

@Controller('probe')
class ProbeController {
  constructor(private readonly planets: PlanetsLookup) {}

  @Get('region')
  @RegionKeyAuth('region:read')
  @ApiOkResponse(OBJECT)
  region(@CurrentRegion() region: RegionPrincipal) {
    return { regionId: region.regionId, apiKeyId: region.apiKeyId };
  }

  @Get('planets/:planetId')
  @UserAuth()
  @ApiParam(PLANET_ID_PARAM)
  @ApiOkResponse(OBJECT)
  @ApiProblems(VALIDATION, NOT_FOUND)
  async planet(@PlanetId() planetId: number, @CurrentUser() user: AuthenticatedUser) {
    await this.planets.assertPlanetExists(planetId);
    return { planetId, userId: user.id };
  }

  @Post('planets/:planetId/held')
  @HttpCode(200)
  @UserAuth()
  @ApiParam(PLANET_ID_PARAM)
  @ApiOkResponse(OBJECT)
  @ApiProblems(VALIDATION, NOT_FOUND)
  held(@PlanetId() planetId: number) {
    return this.planets.withPlanetHeld(planetId, async (tx) => {
      // What the work does happens in the transaction that holds the planet.
      const [{ name }] = await managerOf(tx).query<{ name: string }[]>('SELECT name FROM planets WHERE id = $1', [
        planetId,
      ]);
      return { planetId, name };
    });
  }
}

@Module({ imports: [CelestialBodiesModule, RegionKeysModule], controllers: [ProbeController] })
class ProbeModule {}

@Controller('bare')
class BareController {
  @Get('region')
  @RegionKeyAuth('region:read')
  @ApiOkResponse(OBJECT)
  region(@CurrentRegion() region: RegionPrincipal) {
    return { regionId: region.regionId };
  }

  @Get('me')
  @UserAuth()
  @ApiOkResponse(OBJECT)
  me(@CurrentUser() user: AuthenticatedUser) {
    return { userId: user.id };
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

let t: TestApp;
let region: RegionFixture;
let alice: UserFixture;

beforeAll(async () => {
  t = await startTestApp({}, undefined, [ProbeModule, BareModule]);
  region = await newRegion(t);
  alice = await newUser(t, { name: 'Alice' });
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}): Promise<Response> =>
  t.request({ method: 'GET', url, headers });

describe('a module imported both by the app and by another module', () => {
  it('is one instance, and its routes are declared once', async () => {
    const modules = [...t.app.get(ModulesContainer).values()].map((module) => module.metatype);
    expect(modules.filter((metatype) => metatype === CelestialBodiesModule)).toHaveLength(1);
    expect(modules.filter((metatype) => metatype === RegionKeysModule)).toHaveLength(1);
    expect((await get('/planets')).statusCode).toBe(200);
    expect((await get('/auth/regions/me', { 'x-api-key': region.key })).statusCode).toBe(200);
  });
});

describe.each([
  ['ProbeModule (imports RegionKeysModule)', '/probe/region'],
  ['BareModule (imports nothing)', '/bare/region'],
])('@RegionKeyAuth(permission) + @CurrentRegion() in %s', (_, url) => {
  it('answers 200 with a key that holds the permission, with the caller from @CurrentRegion()', async () => {
    const res = await get(url, { 'x-api-key': region.key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ regionId: region.regionId });
  });

  it('answers 401 without a key, with a malformed one, and with a well-formed key no region holds', async () => {
    expectProblem(await get(url), 401, 'unauthenticated');
    expectProblem(await get(url, { 'x-api-key': 'rk_not-a-key' }), 401, 'unauthenticated');
    expectProblem(await get(url, { 'x-api-key': generateApiKey('live') }), 401, 'unauthenticated');
  });

  it('answers 403 to a key without the permission', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': region.key },
      payload: { permissions: ['keys:write'] },
    });
    expect(res.statusCode).toBe(201);
    expectProblem(await get(url, { 'x-api-key': res.json<{ key: string }>().key }), 403, 'insufficient-permission');
  });
});

describe('@UserAuth() + @CurrentUser() in BareModule (imports nothing)', () => {
  it('answers 200 to Basic and Bearer, 401 without or with wrong credentials', async () => {
    for (const authorization of [alice.basic, alice.bearer]) {
      const res = await get('/bare/me', { authorization });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ userId: alice.id });
    }
    expectProblem(await get('/bare/me'), 401, 'unauthenticated');
    expectProblem(await get('/bare/me', { authorization: `${alice.bearer}x` }), 401, 'unauthenticated');
  });
});

describe('PlanetsLookup from the planets front door', () => {
  it('assertPlanetExists: 200 for a planet, the planets 404 problem for none, 401 without credentials', async () => {
    const planet = await createPlanet(t, alice);
    const res = await get(`/probe/planets/${planet.id}`, { authorization: alice.bearer });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ planetId: planet.id, userId: alice.id });

    const missing = expectProblem(await get('/probe/planets/2147483647', { authorization: alice.bearer }), 404);
    expect(missing.detail).toBe('No planet with id 2147483647 exists.');
    expectProblem(await get('/probe/planets/0', { authorization: alice.bearer }), 400, 'validation');
    expectProblem(await get(`/probe/planets/${planet.id}`), 401, 'unauthenticated');
  });

  it('withPlanetHeld: runs the work in a transaction that sees the planet; 404 for none', async () => {
    const planet = await createPlanet(t, alice, { name: 'Kepler-22b' });
    const held = (id: number) =>
      t.request({ method: 'POST', url: `/probe/planets/${id}/held`, headers: { authorization: alice.basic } });
    const res = await held(planet.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ planetId: planet.id, name: 'Kepler-22b' });
    expectProblem(await held(2147483647), 404);
  });

  it('withPlanetHeld: a DELETE of the planet waits for the work to end; then the planet is gone, and held no more', async () => {
    const lookup = t.app.get(PlanetsLookup);
    const planet = await createPlanet(t, alice);
    let enter!: () => void;
    let release!: () => void;
    const entered = new Promise<void>((resolve) => (enter = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const work = lookup.withPlanetHeld(planet.id, async () => {
      enter();
      await released;
      return 'done';
    });
    await entered;

    let deletedAt: number | undefined;
    const deletion = t
      .request({ method: 'DELETE', url: `/planets/${planet.id}`, headers: { authorization: alice.bearer } })
      .then((res) => {
        deletedAt = Date.now();
        return res;
      });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deletedAt).toBeUndefined();
    const releasedAt = Date.now();
    release();
    await expect(work).resolves.toBe('done');
    expect((await deletion).statusCode).toBe(204);
    expect(deletedAt).toBeGreaterThanOrEqual(releasedAt);

    const never = jest.fn(async () => 'never');
    await expect(lookup.withPlanetHeld(planet.id, never)).rejects.toMatchObject({
      message: `No planet with id ${planet.id} exists.`,
    });
    expect(never).not.toHaveBeenCalled();
    await expect(lookup.assertPlanetExists(planet.id)).rejects.toMatchObject({ status: 404 });
  });
});

@Module({})
class OperatorContextModule {}

describe('the same modules in an application context, as the operator CLI makes one', () => {
  it('boots without AuthModule, and makes no first region and adds no sample planets (server-only start-up work)', async () => {
    const database = await createTestDatabase();
    // Both start-up tasks would act here if they ran: a preset first key, and samples asked for on any database.
    const config = loadConfig({ ...TEST_ENV, ...database.env, SEED_SAMPLE_DATA: 'true' }, FEATURE_SETTINGS);
    const context = await NestFactory.createApplicationContext(
      {
        module: OperatorContextModule,
        imports: [
          ConfigModule.forRoot(config),
          DatabaseModule.forCommands(),
          ClockModule,
          MetricsModule.off(),
          ProbeModule,
          BareModule,
        ],
      },
      { logger: false, abortOnError: false },
    );
    try {
      expect(await context.get(RegionKeysService).hasAnyRegion()).toBe(false);
      expect(await context.get(DataSource).query('SELECT count(*)::int AS planets FROM planets')).toEqual([
        { planets: 0 },
      ]);
    } finally {
      await context.close();
      await database.drop();
    }
  });
});

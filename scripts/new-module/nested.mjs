// The files of a nested feature: a list under an item of another feature,
// /<parent>/{parentId}/<name>, and /<name>/{id}: see scripts/new-module.mjs. Most of their text is
// in shared.mjs, which a top-level feature's share; here are the parents a nested feature may
// have and what only this shape says.
import { cap } from './names.mjs';
import * as shared from './shared.mjs';

/**
 * The features a nested resource may belong to: those whose front door (index.ts) offers a
 * lookup that answers the parent's own 404 and holds the parent within the child's unit of
 * work, so that nothing is created under a parent being deleted. Each entry says what the
 * templates use of it.
 */
export const PARENTS = {
  planets: {
    /** src/<feature>/index.ts must export every name of `exports`. */
    feature: 'celestial-bodies',
    exports: ['CelestialBodiesModule', 'PlanetsLookup', 'PlanetId', 'PLANET_ID_PARAM', 'PlanetNotFoundError'],
    Module: 'CelestialBodiesModule',
    Lookup: 'PlanetsLookup',
    /** The error of the parent's 404, for its example. */
    NotFoundError: 'PlanetNotFoundError',
    /** Throws the parent's 404 unless it exists. */
    assertExists: 'assertPlanetExists',
    /** Runs work in a transaction that holds the parent; the parent's 404 when it does not exist. */
    withHeld: 'withPlanetHeld',
    /** The path parameter: its decorator (the number it holds) and its @ApiParam. */
    param: 'planetId',
    ParamDecorator: 'PlanetId',
    PARAM_DOC: 'PLANET_ID_PARAM',
    paramRule: 'planetId is not a positive integer',
    one: 'planet',
    many: 'planets',
    aOne: 'a planet',
    One: 'Planet',
    ONE: 'PLANET',
    path: '/planets',
    table: 'planets',
    column: 'planet_id',
    /** Ids of the parent: as TypeScript and SQL see them, one no test creates, one the parameter refuses. */
    type: 'number',
    sqlType: 'integer',
    exampleId: '1',
    unknownId: '2_000_000_000',
    invalidId: '0',
    /** The body of a create of the parent, and in the soak the list of the parents it made. */
    body: "{ name: 'Observed' }",
    soakList: 'planets',
    /** In test/e2e/hostile-input.e2e-spec.ts, the function giving ids of existing parents. */
    hostileParams: 'planetIds',
    /** In test/e2e/hostile-input.e2e-spec.ts, the id of an existing one. */
    hostileId: 'alicePlanetId',
  },
};

/** Each file the feature is made of, by path, for the names `n` (see names.mjs) under the parent `p` (of PARENTS). */
export const nestedFiles = (n, p) => ({
  [`src/${n.name}/index.ts`]: shared.indexFile(n),

  [`src/${n.name}/${n.name}.module.ts`]: shared.moduleFile(
    n,
    p,
    `/**
 * ${n.Title} of ${p.aOne}: a public list under each ${p.one}; signed-in users add to it, and only
 * its creator deletes one. ${p.Module} gives ${p.Lookup}.
 */`,
  ),

  [`src/${n.name}/${n.name}.controller.ts`]: shared.controllerFile(n, p, {
    doc: `/** The ${n.many} of ${p.aOne} under ${shared.listRoute(n, p)}, and each at /${n.name}/{id}. */\n`,
    listSummary: `List ${p.aOne}'s ${n.many}`,
    listDescription: `A page of the ${n.many} of the ${p.one}, oldest first.`,
    createSummary: `Add ${n.aOne} to ${p.aOne}`,
    createDescription: 'You become its creator: only you can change or delete it.',
  }),
  [`src/${n.name}/${n.name}.errors.ts`]: shared.errorsFile(n),

  [`src/${n.name}/${n.name}.service.ts`]: shared.serviceFile(n, p, {
    listDoc: `The ${p.one}'s 404 when it does not exist; else its page and count, side by side.`,
    create: `  /**
   * One INSERT, in a transaction that holds the ${p.one}: the ${p.one}'s 404 when it does not
   * exist, and it cannot be deleted before the ${n.one} is in (a delete of the ${p.one} then
   * takes its ${n.many} with it).
   */
  create${n.Singular}(${p.param}: ${p.type}, creatorId: number, values: ${n.Singular}Values): Promise<${n.Singular}> {
    const row = { id: randomUUID(), ${p.param}, ...values, creatorId, createdAt: this.clock.now() };
    return this.${p.table}.${p.withHeld}(${p.param}, (tx) => this.repository.insert(tx, row));
  }
`,
  }),

  [`src/${n.name}/${n.name}.repository.ts`]: shared.repositoryFile(n, p),

  [`src/${n.name}/entities/${n.singular}.entity.ts`]: shared.entityFile(
    n,
    p,
    `/**
 * ${cap(n.aOne)} of ${p.aOne}, added by a signed-in user. The database keeps its ${p.one} and its
 * creator existing rows (foreign keys named by table, not by entity: the code never reads
 * those tables); it goes when its ${p.one} goes (ON DELETE CASCADE).
 */`,
  ),

  [`src/${n.name}/migrations/${n.timestamp}-${n.name}.ts`]: shared.migrationFile(n, p, {
    doc: `/** ${n.Title} of ${p.table}. Needs \`${p.table}\` and \`users\` (the ${p.one} and the creator of each ${n.one}). */`,
    listIndexComment: `${cap(p.aOne)}'s list, in its order; and the foreign key's index (a delete of ${p.aOne} finds its ${n.many}).`,
  }),

  [`src/${n.name}/dto/${n.singular}.dto.ts`]: shared.dtoFile(n, p),
  [`src/${n.name}/dto/${n.singular}-input.dto.ts`]: shared.inputDtoFile(n, p),
  [`src/${n.name}/dto/${n.singular}-page.dto.ts`]: shared.pageDtoFile(n),

  [`test/unit/${n.name}.service.spec.ts`]: shared.unitTestFile(
    n,
    p,
    `  it('creates ${n.aOne} in the transaction that holds its ${p.one}, with an id of its own, its creator and the time of the Clock', async () => {
    repository.insert.mockImplementation(async (_tx, row) => row);

    const created = await sut.create${n.Singular}(${p.ONE}_ID, 7, { name: 'First' });

    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ${p.param}: ${p.ONE}_ID,
      name: 'First',
      creatorId: 7,
      createdAt: NOW,
    });
    expect(${p.table}.${p.withHeld}).toHaveBeenCalledWith(${p.ONE}_ID, expect.any(Function));
    expect(repository.insert).toHaveBeenCalledWith(TX, created);
  });

  it("answers ${p.aOne} that does not exist with the ${p.one}'s 404, and inserts nothing", async () => {
    ${p.table}.${p.withHeld}.mockRejectedValue(new NotFoundError('No ${p.one} with id ${p.exampleId} exists.'));

    await expect(sut.create${n.Singular}(${p.ONE}_ID, 7, { name: 'First' })).rejects.toMatchObject({ status: 404, slug: 'not-found' });
    expect(repository.insert).not.toHaveBeenCalled();
  });

  it('lists a page of the ${p.one} with the total, once the ${p.one} is found', async () => {
    const row = { id: ID, ${p.param}: ${p.ONE}_ID, name: 'First', creatorId: 7, createdAt: NOW };
    repository.findPageOf${p.One}.mockResolvedValue([row]);
    repository.countOf${p.One}.mockResolvedValue(11);

    await expect(sut.list${n.Plural}(${p.ONE}_ID, 1, 10)).resolves.toEqual({ items: [row], total: 11 });
    expect(${p.table}.${p.assertExists}).toHaveBeenCalledWith(${p.ONE}_ID);
    expect(repository.findPageOf${p.One}).toHaveBeenCalledWith(${p.ONE}_ID, 1, 10);
  });

  it("answers the list of ${p.aOne} that does not exist with the ${p.one}'s 404", async () => {
    ${p.table}.${p.assertExists}.mockRejectedValue(new NotFoundError('No ${p.one} with id ${p.exampleId} exists.'));

    await expect(sut.list${n.Plural}(${p.ONE}_ID, 1, 10)).rejects.toMatchObject({ status: 404 });
    expect(repository.findPageOf${p.One}).not.toHaveBeenCalled();
  });

`,
  ),

  [`test/e2e/${n.name}.e2e-spec.ts`]: `${shared.e2eTestStart(n, { users: ['Alice', 'Bob'], close: 't?.close()' })}
/** A new ${p.one} of \`user\`, made over HTTP: its id. */
const new${p.One} = async (user: UserFixture = alice): Promise<${p.type}> => {
  const res = await t.request({ method: 'POST', url: '${p.path}', headers: { authorization: user.basic }, payload: ${p.body} });
  expect(res.statusCode).toBe(201);
  return res.json().id;
};
const listUrl = (${p.param}: ${p.type} | string) => \`${p.path}/\${${p.param}}/${n.name}\`;
const create = (${p.param}: ${p.type} | string, payload: unknown, headers: Record<string, string> = { authorization: alice.basic }) =>
  t.request({ method: 'POST', url: listUrl(${p.param}), headers, payload: payload as string });
const get = (url: string) => t.request({ method: 'GET', url });

describe('POST ${shared.listRoute(n, p)}', () => {
  let ${p.param}: ${p.type};
  beforeAll(async () => {
    ${p.param} = await new${p.One}();
  });

  it('creates ${n.aOne} of the caller under the ${p.one}, trimmed, at the time of the Clock, with its Location', async () => {
    const res = await create(${p.param}, { name: '  First  ' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      ${p.param},
      name: 'First',
      creatorId: alice.id,
      createdAt: new Date(now).toISOString(),
    });
    expect(res.headers.location).toBe(\`http://localhost:80/${n.name}/\${body.id}\`);
    expect((await get(\`/${n.name}/\${body.id}\`)).json()).toEqual(body);
  });

  it("accepts a Bearer token, and anyone's ${p.one}", async () => {
    expect((await create(${p.param}, { name: 'Second' }, { authorization: bob.bearer })).statusCode).toBe(201);
  });

  it('answers ${p.aOne} that does not exist with 404, and a ${p.param} that is no id with 400', async () => {
    expectProblem(await create(${p.unknownId}, { name: 'Lost' }), 404, 'not-found');
    expectProblem(await create('${p.invalidId}', { name: 'Lost' }), 400, 'validation');
  });

${shared.createRefusals(`${p.param}, `)}});

describe('GET ${shared.listRoute(n, p)}', () => {
  let ${p.param}: ${p.type};
  beforeAll(async () => {
    ${p.param} = await new${p.One}();
    for (const name of ['One', 'Two', 'Three']) expect((await create(${p.param}, { name })).statusCode).toBe(201);
    // Another ${p.one}'s, which the list leaves out.
    expect((await create(await new${p.One}(), { name: 'Elsewhere' })).statusCode).toBe(201);
  });

  it("lists a page of the ${p.one}'s ${n.many}, oldest first, with its meta and paging headers", async () => {
    const res = await get(\`\${listUrl(${p.param})}?limit=2&offset=1\`);
${shared.secondPageChecks}    expect((await get(\`\${listUrl(${p.param})}?limit=2\`)).json().meta.next).toBe(\`http://localhost:80\${listUrl(${p.param})}?limit=2&offset=2\`);
  });

  it('answers ${p.aOne} that does not exist with 404, and a ${p.param} that is no id with 400', async () => {
    expectProblem(await get(listUrl(${p.unknownId})), 404, 'not-found');
    expectProblem(await get(listUrl('${p.invalidId}')), 400, 'validation');
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=ten'])('refuses %s (400)', async (query) => {
    expectProblem(await get(\`\${listUrl(${p.param})}?\${query}\`), 400, 'validation');
  });
});

${shared.itemTests(n, `(await create(await new${p.One}(), { name: 'Mine' })).json()`)}
describe('DELETE ${p.path}/{${p.param}}', () => {
  it('goes with its ${p.one}', async () => {
    const ${p.param} = await new${p.One}();
    const { id } = (await create(${p.param}, { name: 'Orphan' })).json();
    const deleted = await t.request({ method: 'DELETE', url: \`${p.path}/\${${p.param}}\`, headers: { authorization: alice.basic } });
    expect(deleted.statusCode).toBe(204);
    expectProblem(await get(\`/${n.name}/\${id}\`), 404, 'not-found');
    expectProblem(await create(${p.param}, { name: 'Too late' }), 404, 'not-found');
  });
});
`,

  [`test/support/creates/${n.name}.ts`]: shared.createsFile(n, p),

  [`test/client/features/${n.name}.ts`]: `${shared.clientTestStart({
    support: 'check, type ClientContext, expectData, expectNoContent, expectProblem',
    afterDoc: 'Ada and Bob.',
    doc: `${n.Title} of ${p.aOne}: create and list under it, get and delete each.`,
    people: 'ada, bob',
  })}  const parent = await expectData(ada.api.POST('${p.path}', { body: ${p.body} }), 201, '${p.aOne} of Ada');
  const under = { params: { path: { ${p.param}: parent.id } } };
  // No ${p.one} has this id.
  const unknownParent = { params: { path: { ${p.param}: ${p.unknownId} } } };

  const created = await expectData(
    ada.api.POST('${shared.listRoute(n, p)}', { ...under, body: { name: 'First ${n.one}' } }),
    201,
    'create ${n.aOne}',
  );
  check(
    created.creatorId === ada.id && created.${p.param} === parent.id,
    "the new ${n.one} is its creator's, under the ${p.one}",
  );
  await expectProblem(
    anyone.POST('${shared.listRoute(n, p)}', { ...under, body: { name: 'Nobody’s' } }),
    401,
    'unauthenticated',
    'create ${n.aOne} without credentials',
  );
  await expectProblem(
    ada.api.POST('${shared.listRoute(n, p)}', { ...under, body: { name: '' } }),
    400,
    'validation',
    'create ${n.aOne} without a name',
  );
  await expectProblem(
    ada.api.POST('${shared.listRoute(n, p)}', { ...unknownParent, body: { name: 'Lost' } }),
    404,
    'not-found',
    'create ${n.aOne} under an unknown ${p.one}',
  );

  const page = await expectData(
    anyone.GET('${shared.listRoute(n, p)}', { params: { ...under.params, query: { limit: 10 } } }),
    200,
    "a page of the ${p.one}'s ${n.many}",
  );
  check(page.data.length === 1 && page.meta.total === 1, 'the one ${n.one} of the ${p.one}');
  await expectProblem(
    anyone.GET('${shared.listRoute(n, p)}', { params: { ...under.params, query: { limit: 0 } } }),
    400,
    'validation',
    'a page of 0 ${n.many}',
  );
  await expectProblem(
    anyone.GET('${shared.listRoute(n, p)}', unknownParent),
    404,
    'not-found',
    'the ${n.many} of an unknown ${p.one}',
  );

  const read = await expectData(anyone.GET('/${n.name}/{id}', { params: { path: { id: created.id } } }), 200, '${n.aOne}');
${shared.clientItemChecks(n, "{ name: 'Renamed' }")}}
`,
});

/** The feature's entries in the lists that must hold every route, by file. */
export const nestedRoutes = (n, p) => {
  const items = shared.itemRoutes(n);
  return {
    'test/e2e/route-policies.e2e-spec.ts': `  'GET ${p.path}/:${p.param}/${n.name}': 'public',
  'POST ${p.path}/:${p.param}/${n.name}': 'user',
${items['test/e2e/route-policies.e2e-spec.ts']}`,
    'test/e2e/hostile-input.e2e-spec.ts': `  'GET ${p.path}/:${p.param}/${n.name}': { params: ${p.hostileParams} },
  'POST ${p.path}/:${p.param}/${n.name}': { params: ${p.hostileParams}, validBody: () => fc.constant({ name: 'First ${n.one}' }) },
${items['test/e2e/hostile-input.e2e-spec.ts']}`,
    // A parent in use is not deleted meanwhile (use/release), so each answer is the one expected.
    'bench/soak.mjs': `  [
    2,
    'GET ${p.path}/{${p.param}}/${n.name}',
    async () => {
      const parent = use(pick(${p.soakList}));
      await call('GET ${p.path}/{${p.param}}/${n.name}', [200], \`${p.path}/\${parent.id}/${n.name}?limit=\${1 + Math.floor(Math.random() * 100)}\`);
      release(parent);
    },
  ],
  [
    1,
    'POST ${p.path}/{${p.param}}/${n.name}',
    async () => {
      const parent = use(pick(${p.soakList}));
      await call('POST ${p.path}/{${p.param}}/${n.name}', [201], \`${p.path}/\${parent.id}/${n.name}\`, { method: 'POST', ...json({ name: 'Soak' }), auth: asUser(pick(users)) });
      release(parent);
    },
  ],
${items['bench/soak.mjs']}`,
  };
};

// The files of a top-level feature, /<name> and /<name>/{id}: see scripts/new-module.mjs. Most of
// their text is in shared.mjs, which a nested feature's share; here is what only this shape says.
import { cap } from './names.mjs';
import * as shared from './shared.mjs';

/** Each file the feature is made of, by path, for the names `n` (see names.mjs). */
export const topLevelFiles = (n) => ({
  [`src/${n.name}/index.ts`]: shared.indexFile(n),

  [`src/${n.name}/${n.name}.module.ts`]: shared.moduleFile(
    n,
    undefined,
    `/** ${n.Title}: a public list, paged; signed-in users add to it. */`,
  ),

  [`src/${n.name}/${n.name}.controller.ts`]: shared.controllerFile(n, undefined, {
    imports: {
      common: 'Body, Controller, Get, Post, Query, Res',
      swagger: 'ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags',
      problems: 'NOT_FOUND, UNAVAILABLE, VALIDATION',
      swaggerHelpers: 'ApiProblems, jsonBodyProblems',
    },
    listSummary: `List ${n.many}`,
    listDescription: `A page of ${n.many}, oldest first.`,
    createSummary: `Create ${n.aOne}`,
    createDescription: 'You become its creator.',
  }),

  [`src/${n.name}/${n.name}.service.ts`]: shared.serviceFile(n, undefined, {
    problems: 'NotFoundError',
    listDoc: 'The page and the count, side by side.',
    create: `  /** One INSERT: the id is made here, and the time is the Clock's. */
  create${n.Singular}(creatorId: number, name: string): Promise<${n.Singular}> {
    return this.repository.insert({ id: randomUUID(), name, creatorId, createdAt: this.clock.now() });
  }
`,
  }),

  [`src/${n.name}/${n.name}.repository.ts`]: shared.repositoryFile(n, undefined),

  [`src/${n.name}/entities/${n.singular}.entity.ts`]: shared.entityFile(
    n,
    undefined,
    `/**
 * ${cap(n.aOne)}, added by a signed-in user. The database keeps its creator an existing user (a
 * foreign key to the users table, named by table, not by entity).
 */`,
  ),

  [`src/${n.name}/migrations/${n.timestamp}-${n.name}.ts`]: shared.migrationFile(n, undefined, {
    doc: `/** ${n.Title}. Needs \`users\` (the creator of each ${n.one}). */`,
    listIndexComment: "The list's order.",
  }),

  [`src/${n.name}/dto/${n.singular}.dto.ts`]: shared.dtoFile(n, undefined),
  [`src/${n.name}/dto/${n.singular}-input.dto.ts`]: shared.inputDtoFile(n, undefined),
  [`src/${n.name}/dto/${n.singular}-page.dto.ts`]: shared.pageDtoFile(n),

  [`test/unit/${n.name}.service.spec.ts`]: shared.unitTestFile(
    n,
    undefined,
    `  it('creates ${n.aOne} with an id of its own, its creator and the time of the Clock', async () => {
    repository.insert.mockImplementation(async (row) => row);

    const created = await sut.create${n.Singular}(7, 'First');

    expect(created).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'First', creatorId: 7, createdAt: NOW });
    expect(repository.insert).toHaveBeenCalledWith(created);
  });

${shared.unknownIdTest(n)}
  it('lists a page with the total', async () => {
    const row = { id: ID, name: 'First', creatorId: 7, createdAt: NOW };
    repository.findPage.mockResolvedValue([row]);
    repository.count.mockResolvedValue(11);

    await expect(sut.list${n.Plural}(1, 10)).resolves.toEqual({ items: [row], total: 11 });
    expect(repository.findPage).toHaveBeenCalledWith(1, 10);
  });
`,
  ),

  [`test/e2e/${n.name}.e2e-spec.ts`]: `${shared.e2eTestStart(n, {
    imports: "import { DataSource } from 'typeorm';\n\n",
    users: ['Alice'],
    close: 't.close()',
  })}
const create = (payload: unknown, headers: Record<string, string> = { authorization: alice.basic }) =>
  t.request({ method: 'POST', url: '/${n.name}', headers, payload: payload as string });
const get = (url: string) => t.request({ method: 'GET', url });

describe('POST /${n.name}', () => {
  it('creates ${n.aOne} of the caller, trimmed, at the time of the Clock, with its Location', async () => {
    const res = await create({ name: '  First  ' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(String), name: 'First', creatorId: alice.id, createdAt: new Date(now).toISOString() });
    expect(res.headers.location).toBe(\`http://localhost:80/${n.name}/\${body.id}\`);
    expect((await get(\`/${n.name}/\${body.id}\`)).json()).toEqual(body);
  });

  it('accepts a Bearer token', async () => {
    expect((await create({ name: 'Second' }, { authorization: alice.bearer })).statusCode).toBe(201);
  });

${shared.createRefusals('')}});

describe('GET /${n.name}', () => {
  beforeAll(async () => {
    await t.app.get(DataSource).query('DELETE FROM ${n.table}');
    for (const name of ['One', 'Two', 'Three']) expect((await create({ name })).statusCode).toBe(201);
  });

  it('lists a page, oldest first, with its meta and paging headers', async () => {
    const res = await get('/${n.name}?limit=2&offset=1');
${shared.secondPageChecks}    expect((await get('/${n.name}?limit=2')).json().meta.next).toBe('/${n.name}?limit=2&offset=2');
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=ten'])('refuses %s (400)', async (query) => {
    expectProblem(await get(\`/${n.name}?\${query}\`), 400, 'validation');
  });
});

${shared.getItemTests(n)}`,

  [`test/support/creates/${n.name}.ts`]: shared.createsFile(n, undefined),

  [`test/client/features/${n.name}.ts`]: `${shared.clientTestStart({
    support: 'check, type ClientContext, expectData, expectProblem',
    afterDoc: `Ada adds ${n.many}.`,
    doc: `${n.Title}: create, list, get.`,
    people: 'ada',
  })}  const created = await expectData(
    ada.api.POST('/${n.name}', { body: { name: 'First ${n.one}' } }),
    201,
    'create ${n.aOne}',
  );
  check(created.creatorId === ada.id && created.name === 'First ${n.one}', 'the new ${n.one} is its creator’s');
  await expectProblem(
    anyone.POST('/${n.name}', { body: { name: 'Nobody’s' } }),
    401,
    'unauthenticated',
    'create ${n.aOne} without credentials',
  );
  await expectProblem(ada.api.POST('/${n.name}', { body: { name: '' } }), 400, 'validation', 'create ${n.aOne} without a name');

  const page = await expectData(anyone.GET('/${n.name}', { params: { query: { limit: 1 } } }), 200, 'a page of ${n.many}');
  check(page.data.length === 1 && page.meta.total >= 1, 'a page of one ${n.one}');
  await expectProblem(
    anyone.GET('/${n.name}', { params: { query: { limit: 0 } } }),
    400,
    'validation',
    'a page of 0 ${n.many}',
  );

  const read = await expectData(
    anyone.GET('/${n.name}/{id}', { params: { path: { id: created.id } } }),
    200,
    '${n.aOne}',
  );
${shared.clientItemChecks(n)}}
`,
});

/** The feature's entries in the lists that must hold every route, by file. */
export const topLevelRoutes = (n) => ({
  'test/e2e/route-policies.e2e-spec.ts': `  'GET /${n.name}': 'public',
  'GET /${n.name}/:id': 'public',
  'POST /${n.name}': 'user',`,
  'test/e2e/hostile-input.e2e-spec.ts': `  'GET /${n.name}': {},
  'GET /${n.name}/:id': {},
  'POST /${n.name}': { validBody: () => fc.constant({ name: 'First ${n.one}' }) },`,
  'bench/soak.mjs': `  [2, 'GET /${n.name}', () => call('GET /${n.name}', [200], \`/${n.name}?limit=\${1 + Math.floor(Math.random() * 100)}\`)],
  [1, 'POST /${n.name}', () => call('POST /${n.name}', [201], '/${n.name}', { method: 'POST', ...json({ name: 'Soak' }), auth: asUser(pick(users)) })],
  [1, 'GET /${n.name}/{id}', () => call('GET /${n.name}/{id} (unknown)', [404], \`/${n.name}/\${randomUUID()}\`)],`,
});

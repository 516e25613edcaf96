// The files of a top-level feature, /<name> and /<name>/{id}, and of one whose items refer to
// another feature's by id in their body (n.ref, `--refers-to planets`): see
// scripts/new-module.mjs. Most of their text is in shared.mjs, which a nested feature's share;
// here is what only these shapes say.
import { cap } from './names.mjs';
import * as shared from './shared.mjs';

/** Each file the feature is made of, by path, for the names `n` (see names.mjs). */
export const topLevelFiles = (n) => {
  const r = n.ref;
  const sample = shared.fieldsOf(n).sample;
  /** The e2e test's valid body of a create named `name`, referring to the test's own `ref`. */
  const body = (name) => sample(`'${name}'`, r && r.param);
  return {
    [`src/${n.name}/index.ts`]: shared.indexFile(n),

    [`src/${n.name}/${n.name}.module.ts`]: shared.moduleFile(
      n,
      undefined,
      `/** ${n.Title}: a public list, paged; signed-in users add to it, and only its creator changes one.${
        r ? ` Each refers to ${r.aOne}: ${r.Module} gives ${r.Lookup}.` : ''
      } */`,
    ),

    [`src/${n.name}/${n.name}.controller.ts`]: shared.controllerFile(n, undefined, {
      listSummary: `List ${n.many}`,
      listDescription: `A page of ${n.many}, oldest first.`,
      createSummary: `Create ${n.aOne}`,
      createDescription: `You become its creator: only you can change or delete it.${r ? ` Its ${r.param} names an existing ${r.one} (else 404).` : ''}`,
    }),
    [`src/${n.name}/${n.name}.errors.ts`]: shared.errorsFile(n),

    [`src/${n.name}/${n.name}.service.ts`]: shared.serviceFile(n, undefined, {
      listDoc: 'The page and the count, side by side.',
      create: shared.topLevelCreate(n),
    }),

    [`src/${n.name}/${n.name}.repository.ts`]: shared.repositoryFile(n, undefined),

    [`src/${n.name}/entities/${n.singular}.entity.ts`]: shared.entityFile(
      n,
      undefined,
      `/**
 * ${cap(n.aOne)}, added by a signed-in user. The database keeps its creator an existing user${
   r ? ` and its ${r.one} an existing ${r.one} (it goes when the ${r.one} goes)` : ''
 } (foreign keys named by table, not by entity).
 */`,
    ),

    [`src/${n.name}/migrations/${n.timestamp}-${n.name}.ts`]: shared.migrationFile(n, undefined, {
      doc: `/** ${n.Title}. Needs \`users\`${r ? ` and \`${r.table}\`` : ''}. */`,
      listIndexComment: "The list's order.",
    }),

    [`src/${n.name}/dto/${n.singular}.dto.ts`]: shared.dtoFile(n, undefined),
    [`src/${n.name}/dto/${n.singular}-input.dto.ts`]: shared.inputDtoFile(n, undefined),
    [`src/${n.name}/dto/${n.singular}-page.dto.ts`]: shared.pageDtoFile(n),

    [`test/unit/${n.name}.service.spec.ts`]: shared.unitTestFile(
      n,
      undefined,
      `  it('creates ${n.aOne} in a transaction${r ? ` that holds its ${r.one}` : ''}, with an id of its own, its creator and the time of the Clock', async () => {
    repository.insert.mockImplementation(async (_tx, row) => row);

    const created = await sut.create${n.Singular}(7, ${shared.fieldsOf(n).values("'First'")});

    expect(created).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), ${r ? `${r.param}: ${r.exampleId}, ` : ''}name: 'First', creatorId: 7, createdAt: NOW });
    expect(repository.insert).toHaveBeenCalledWith(TX, created);${
      r
        ? `
    expect(${r.table}.${r.withHeld}).toHaveBeenCalledWith(${r.exampleId}, expect.any(Function));`
        : ''
    }
  });
`,
    ),

    [`test/e2e/${n.name}.e2e-spec.ts`]: `${shared.e2eTestStart(n, {
      imports: "import { DataSource } from 'typeorm';\n\n",
      users: ['Alice', 'Bob'],
      close: 't?.close()',
    })}${
      r
        ? `let ${r.param}: ${r.type};
beforeAll(async () => {
  const res = await t.request({ method: 'POST', url: '${r.path}', headers: { authorization: alice.basic }, payload: ${r.body} });
  ${r.param} = res.json().id;
});
`
        : ''
    }
const create = (payload: unknown, headers: Record<string, string> = { authorization: alice.basic }) =>
  t.request({ method: 'POST', url: '/${n.name}', headers, payload: payload as string });
const get = (url: string) => t.request({ method: 'GET', url });

describe('POST /${n.name}', () => {
  it('creates ${n.aOne} of the caller, trimmed, at the time of the Clock, with its Location', async () => {
    const res = await create(${sample("'  First  '", r && r.param)});
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(String), ${r ? `${r.param}, ` : ''}name: 'First', creatorId: alice.id, createdAt: new Date(now).toISOString() });
    expect(res.headers.location).toBe(\`http://localhost:80/${n.name}/\${body.id}\`);
  });
${
  r
    ? `
  it('answers a ${r.param} that names no ${r.one} with 404', async () => {
    expectProblem(await create(${sample("'Lost'", r.unknownId)}), 404, 'not-found');
  });
`
    : ''
}
  it('refuses a caller without credentials (401), and a body that is not valid (400)', async () => {
    expectProblem(await create(${body('Nobody')}, {}), 401);
    expectProblem(await create({ ...${body('Fine')}, name: '' }), 400, 'validation');
    expectProblem(await create({ ...${body('Fine')}, extra: true }), 400, 'validation');
  });
});

describe('GET /${n.name}', () => {
  it('lists a page, oldest first, with its meta and paging headers', async () => {
    await t.app.get(DataSource).query('DELETE FROM ${n.table}');
    for (const name of ['One', 'Two', 'Three']) expect((await create(${sample('name', r && r.param)})).statusCode).toBe(201);
    const res = await get('/${n.name}?limit=2&offset=1');
${shared.secondPageChecks}  });
});

${shared.itemTests(n, `(await create(${body('Mine')})).json()`)}`,

    [`test/support/creates/${n.name}.ts`]: shared.createsFile(n, undefined),

    [`test/client/features/${n.name}.ts`]: `${shared.clientTestStart({
      support: `check, type ClientContext, expectData, expectNoContent, expectProblem${r ? ', UNKNOWN_PLANET_ID' : ''}`,
      afterDoc: 'Ada and Bob.',
      doc: `${n.Title}: create, list, get, update, delete.`,
      people: 'ada, bob',
    })}${
      r
        ? `  const other = await expectData(ada.api.POST('${r.path}', { body: ${r.body} }), 201, '${r.aOne} of Ada');\n`
        : ''
    }  const created = await expectData(
    ada.api.POST('/${n.name}', { body: ${sample(`'First ${n.one}'`, r && 'other.id')} }),
    201,
    'create ${n.aOne}',
  );
  check(created.creatorId === ada.id && created.name === 'First ${n.one}', 'the new ${n.one} is its creator’s');
  await expectProblem(
    anyone.POST('/${n.name}', { body: ${sample("'Nobody’s'", r && 'other.id')} }),
    401,
    'unauthenticated',
    'create ${n.aOne} without credentials',
  );
${
  r
    ? `  await expectProblem(
    ada.api.POST('/${n.name}', { body: ${sample("'Lost'", 'UNKNOWN_PLANET_ID')} }),
    404,
    'not-found',
    'create ${n.aOne} of an unknown ${r.one}',
  );
`
    : ''
}
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
${shared.clientItemChecks(n, sample("'Renamed'", r && 'other.id'))}}
`,
  };
};

/** The feature's entries in the lists that must hold every route, by file. */
export const topLevelRoutes = (n) => {
  const r = n.ref;
  const items = shared.itemRoutes(n);
  const sample = shared.fieldsOf(n).sample;
  return {
    'test/e2e/route-policies.e2e-spec.ts': `  'GET /${n.name}': 'public',
  'POST /${n.name}': 'user',
${items['test/e2e/route-policies.e2e-spec.ts']}`,
    'test/e2e/hostile-input.e2e-spec.ts': `  'GET /${n.name}': {},
  'POST /${n.name}': { validBody: () => fc.constant(${sample(`'First ${n.one}'`, r?.hostileId)}) },
${items['test/e2e/hostile-input.e2e-spec.ts']}`,
    'bench/soak.mjs': `  [2, 'GET /${n.name}', () => call('GET /${n.name}', [200], \`/${n.name}?limit=\${1 + Math.floor(Math.random() * 100)}\`)],
${
  r
    ? `  [
    1,
    'POST /${n.name}',
    async () => {
      const other = use(pick(${r.soakList}));
      await call('POST /${n.name}', [201], '/${n.name}', { method: 'POST', ...json(${sample("'Soak'", 'other.id')}), auth: asUser(pick(users)) });
      release(other);
    },
  ],`
    : `  [1, 'POST /${n.name}', () => call('POST /${n.name}', [201], '/${n.name}', { method: 'POST', ...json({ name: 'Soak' }), auth: asUser(pick(users)) })],`
}
${items['bench/soak.mjs']}`,
  };
};

// The files of a top-level feature, /<name> and /<name>/{id}: see scripts/new-module.mjs.
import { EXAMPLE_ID } from './names.mjs';

/** Each file the feature is made of, by path, for the names `n` (see names.mjs). */
export const topLevelFiles = (n) => ({
  [`src/${n.name}/index.ts`]: `// The ${n.name} feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { ${n.Plural}Module } from './${n.name}.module';
`,

  [`src/${n.name}/${n.name}.module.ts`]: `import { Module } from '@nestjs/common';

import { ${n.Plural}Controller } from './${n.name}.controller';
import { ${n.Plural}Repository } from './${n.name}.repository';
import { ${n.Plural}Service } from './${n.name}.service';

/** ${n.Title}: a public list, paged; signed-in users add to it. */
@Module({
  controllers: [${n.Plural}Controller],
  providers: [${n.Plural}Repository, ${n.Plural}Service],
})
export class ${n.Plural}Module {}
`,

  [`src/${n.name}/${n.name}.controller.ts`]: `import { Body, Controller, Get, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
import { Public } from '../common/auth';
import { absoluteUrl, locationHeader } from '../common/http';
import { offsetPage, OffsetPageQueryDto, PAGINATION_HEADERS } from '../common/paging';
import { NOT_FOUND, UNAVAILABLE, VALIDATION } from '../common/problem';
import { ApiProblems, jsonBodyProblems } from '../common/swagger';
import { UuidParam } from '../common/validation';
import { AppConfig } from '../config';
import { ${n.Singular}Dto } from './dto/${n.singular}.dto';
import { ${n.Singular}InputDto } from './dto/${n.singular}-input.dto';
import { ${n.Singular}PageDto } from './dto/${n.singular}-page.dto';
import { ${n.Plural}Service } from './${n.name}.service';

const itemPath = (id: string): string => \`/${n.name}/\${id}\`;
const ID_PARAM = { name: 'id', format: 'uuid', description: "The ${n.one}'s id." } as const;

@ApiTags('${n.Title}')
@Controller('${n.name}')
export class ${n.Plural}Controller {
  constructor(
    private readonly ${n.plural}: ${n.Plural}Service,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ operationId: 'list${n.Plural}', summary: 'List ${n.many}', description: 'A page of ${n.many}, oldest first.' })
  @ApiOkResponse({ type: ${n.Singular}PageDto, headers: PAGINATION_HEADERS, description: 'A page of ${n.many}' })
  @ApiProblems(
    { types: [VALIDATION], description: 'limit is not an integer from 1 to 100, or offset not an integer from 0.' },
    UNAVAILABLE,
  )
  async list${n.Plural}(
    @Query() query: OffsetPageQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}PageDto> {
    const { items, total } = await this.${n.plural}.list${n.Plural}(query.limit, query.offset);
    const page = offsetPage('/${n.name}', query, total);
    reply.headers(page.headers);
    return { data: items.map((item) => ${n.Singular}Dto.from(item)), meta: page.meta };
  }

  @Post()
  @UserAuth()
  @ApiOperation({ operationId: 'create${n.Singular}', summary: 'Create a ${n.one}', description: 'You become its creator.' })
  @ApiBody({ type: ${n.Singular}InputDto })
  @ApiCreatedResponse({
    type: ${n.Singular}Dto,
    description: 'Created',
    headers: locationHeader('The URI of the new ${n.one}.', '/${n.name}/${EXAMPLE_ID}'),
  })
  @ApiProblems(
    ...jsonBodyProblems('Invalid input: a name that is missing, empty, longer than 100 characters or not plain text, or unknown fields.'),
    UNAVAILABLE,
  )
  async create${n.Singular}(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: ${n.Singular}InputDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}Dto> {
    const created = ${n.Singular}Dto.from(await this.${n.plural}.create${n.Singular}(user.id, body.name));
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, itemPath(created.id)));
    return created;
  }

  @Get(':id')
  @Public()
  @ApiOperation({ operationId: 'get${n.Singular}', summary: 'Get a ${n.one}' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ${n.Singular}Dto, description: 'The ${n.one}' })
  @ApiProblems(
    { types: [VALIDATION], description: 'id is not a UUID.' },
    { types: [NOT_FOUND], description: 'No ${n.one} with this id.', detail: 'No ${n.one} with id ${EXAMPLE_ID} exists.' },
    UNAVAILABLE,
  )
  async get${n.Singular}(@UuidParam('id') id: string): Promise<${n.Singular}Dto> {
    return ${n.Singular}Dto.from(await this.${n.plural}.get${n.Singular}(id));
  }
}
`,

  [`src/${n.name}/${n.name}.service.ts`]: `import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { Clock } from '../common/clock';
import { NotFoundError } from '../common/problem';
import type { ${n.Singular} } from './entities/${n.singular}.entity';
import { ${n.Plural}Repository } from './${n.name}.repository';

export interface ${n.Singular}Page {
  items: ${n.Singular}[];
  total: number;
}

@Injectable()
export class ${n.Plural}Service {
  constructor(
    private readonly repository: ${n.Plural}Repository,
    private readonly clock: Clock,
  ) {}

  /** The page and the count, side by side. */
  async list${n.Plural}(limit: number, offset: number): Promise<${n.Singular}Page> {
    const [items, total] = await Promise.all([this.repository.findPage(limit, offset), this.repository.count()]);
    return { items, total };
  }

  async get${n.Singular}(id: string): Promise<${n.Singular}> {
    const found = await this.repository.findById(id);
    if (!found) throw new NotFoundError(\`No ${n.one} with id \${id} exists.\`);
    return found;
  }

  /** One INSERT: the id is made here, and the time is the Clock's. */
  create${n.Singular}(creatorId: number, name: string): Promise<${n.Singular}> {
    return this.repository.insert({ id: randomUUID(), name, creatorId, createdAt: this.clock.now() });
  }
}
`,

  [`src/${n.name}/${n.name}.repository.ts`]: `import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { ${n.Singular} } from './entities/${n.singular}.entity';

/** All SQL of the ${n.many}. */
@Injectable()
export class ${n.Plural}Repository {
  constructor(private readonly dataSource: DataSource) {}

  /** Oldest first, the id settling ties: the order of the index ${n.table}_created_at_id_idx. */
  findPage(limit: number, offset: number): Promise<${n.Singular}[]> {
    return this.dataSource
      .getRepository(${n.Singular})
      .find({ order: { createdAt: 'ASC', id: 'ASC' }, take: limit, skip: offset });
  }

  count(): Promise<number> {
    return this.dataSource.getRepository(${n.Singular}).count();
  }

  findById(id: string): Promise<${n.Singular} | null> {
    return this.dataSource.getRepository(${n.Singular}).findOneBy({ id });
  }

  async insert(row: ${n.Singular}): Promise<${n.Singular}> {
    await this.dataSource.getRepository(${n.Singular}).insert(row);
    return row;
  }
}
`,

  [`src/${n.name}/entities/${n.singular}.entity.ts`]: `import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';

/**
 * A ${n.one}, added by a signed-in user. The database keeps its creator an existing user (a
 * foreign key to the users table, named by table, not by entity).
 */
@Entity('${n.table}')
@Index('${n.table}_created_at_id_idx', ['createdAt', 'id'])
@Index('${n.table}_creator_id_idx', ['creatorId'])
export class ${n.Singular} {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: '${n.table}_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'creator_id', type: 'integer' })
  @ForeignKey('users', 'id', { name: '${n.table}_creator_id_fkey', onDelete: 'RESTRICT' })
  creatorId: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
`,

  [`src/${n.name}/migrations/${n.timestamp}-${n.name}.ts`]: `import { MigrationInterface, QueryRunner } from 'typeorm';

/** ${n.Title}. Needs \`users\` (the creator of each ${n.one}). */
export class ${n.Plural}${n.timestamp} implements MigrationInterface {
  name = '${n.Plural}${n.timestamp}';

  async up(q: QueryRunner): Promise<void> {
    await q.query(\`CREATE TABLE "${n.table}" (
      "id" uuid NOT NULL,
      "name" character varying(100) NOT NULL,
      "creator_id" integer NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      CONSTRAINT "${n.table}_pkey" PRIMARY KEY ("id"))\`);
    // The list's order.
    await q.query(\`CREATE INDEX "${n.table}_created_at_id_idx" ON "${n.table}" ("created_at", "id")\`);
    // The foreign key's index: a user's ${n.many}, and checks when a user row changes.
    await q.query(\`CREATE INDEX "${n.table}_creator_id_idx" ON "${n.table}" ("creator_id")\`);
    await q.query(
      \`ALTER TABLE "${n.table}" ADD CONSTRAINT "${n.table}_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION\`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(\`DROP TABLE "${n.table}"\`);
  }
}
`,

  [`src/${n.name}/dto/${n.singular}.dto.ts`]: `import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import type { ${n.Singular} } from '../entities/${n.singular}.entity';

@ApiSchema({ name: '${n.Singular}' })
export class ${n.Singular}Dto {
  @ApiProperty({ format: 'uuid', readOnly: true, example: '${EXAMPLE_ID}' })
  id: string;

  @ApiProperty({ example: 'First ${n.one}' })
  name: string;

  @ApiProperty({ type: 'integer', format: 'int64', readOnly: true, description: 'The id of the user who created it.', example: 1 })
  creatorId: number;

  @ApiProperty({ format: 'date-time', readOnly: true, example: '2026-11-01T08:00:00.000Z' })
  createdAt: string;

  static from(item: ${n.Singular}): ${n.Singular}Dto {
    return { id: item.id, name: item.name, creatorId: item.creatorId, createdAt: item.createdAt.toISOString() };
  }
}
`,

  [`src/${n.name}/dto/${n.singular}-input.dto.ts`]: `import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length } from 'class-validator';

import { IsPlainText, PLAIN_TEXT_RULE, trim } from '../../common/validation';

/** The body of POST /${n.name}. */
@ApiSchema({ name: '${n.Singular}Input' })
export class ${n.Singular}InputDto {
  @ApiProperty({ minLength: 1, maxLength: 100, description: \`Trimmed. \${PLAIN_TEXT_RULE}\`, example: 'First ${n.one}' })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @IsPlainText()
  name: string;
}
`,

  [`src/${n.name}/dto/${n.singular}-page.dto.ts`]: `import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { PageMetaDto } from '../../common/paging';
import { ${n.Singular}Dto } from './${n.singular}.dto';

@ApiSchema({ name: 'Paginated${n.Plural}' })
export class ${n.Singular}PageDto {
  @ApiProperty({ type: () => [${n.Singular}Dto] })
  data: ${n.Singular}Dto[];

  @ApiProperty({ type: () => PageMetaDto })
  meta: PageMetaDto;
}
`,

  [`test/unit/${n.name}.service.spec.ts`]: `import type { Clock } from '../../src/common/clock/clock';
import { ${n.Plural}Repository } from '../../src/${n.name}/${n.name}.repository';
import { ${n.Plural}Service } from '../../src/${n.name}/${n.name}.service';
import { automock } from '../support/service-mocks';

const NOW = new Date('2026-11-22T10:15:00.000Z');
const ID = '${EXAMPLE_ID}';

function new${n.Plural}ServiceTest() {
  const repository = automock(${n.Plural}Repository);
  const clock = { now: () => new Date(NOW) } satisfies Clock;
  return { sut: new ${n.Plural}Service(repository, clock), repository };
}

describe(${n.Plural}Service.name, () => {
  let sut: ${n.Plural}Service;
  let repository: jest.Mocked<${n.Plural}Repository>;

  beforeEach(() => {
    ({ sut, repository } = new${n.Plural}ServiceTest());
  });

  it('creates a ${n.one} with an id of its own, its creator and the time of the Clock', async () => {
    repository.insert.mockImplementation(async (row) => row);

    const created = await sut.create${n.Singular}(7, 'First');

    expect(created).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'First', creatorId: 7, createdAt: NOW });
    expect(repository.insert).toHaveBeenCalledWith(created);
  });

  it('answers an unknown id with the not-found error', async () => {
    repository.findById.mockResolvedValue(null);

    await expect(sut.get${n.Singular}(ID)).rejects.toMatchObject({ status: 404, slug: 'not-found' });
  });

  it('lists a page with the total', async () => {
    const row = { id: ID, name: 'First', creatorId: 7, createdAt: NOW };
    repository.findPage.mockResolvedValue([row]);
    repository.count.mockResolvedValue(11);

    await expect(sut.list${n.Plural}(1, 10)).resolves.toEqual({ items: [row], total: 11 });
    expect(repository.findPage).toHaveBeenCalledWith(1, 10);
  });
});
`,

  [`test/e2e/${n.name}.e2e-spec.ts`]: `import { randomUUID } from 'node:crypto';

import { DataSource } from 'typeorm';

import { Clock } from '../../src/common/clock/clock';
import { expectProblem } from '../support/problems';
import { startTestApp, TestApp } from '../support/test-app';
import { newUser, UserFixture } from '../support/users';

let t: TestApp;
let alice: UserFixture;
let now = Date.parse('2026-11-22T10:00:00.000Z');

beforeAll(async () => {
  t = await startTestApp();
  alice = await newUser(t, { name: 'Alice' });
  // A second between two ${n.many}, so that "oldest first" is one order.
  jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date((now += 1000)));
});
afterAll(async () => t.close());

const create = (payload: unknown, headers: Record<string, string> = { authorization: alice.basic }) =>
  t.request({ method: 'POST', url: '/${n.name}', headers, payload: payload as string });
const get = (url: string) => t.request({ method: 'GET', url });

describe('POST /${n.name}', () => {
  it('creates a ${n.one} of the caller, trimmed, at the time of the Clock, with its Location', async () => {
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

  it('refuses a caller without valid credentials (401)', async () => {
    expectProblem(await create({ name: 'Nobody' }, {}), 401);
    expectProblem(await create({ name: 'Nobody' }, { authorization: 'Bearer not.a.token' }), 401);
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '   ' }],
    ['a name of 101 characters', { name: 'x'.repeat(101) }],
    ['a line break', { name: 'a\\nb' }],
    ['a name that is not text', { name: 42 }],
    ['an unknown field', { name: 'Fine', extra: true }],
  ])('refuses %s (400)', async (_, payload) => {
    expectProblem(await create(payload), 400, 'validation');
  });
});

describe('GET /${n.name}', () => {
  beforeAll(async () => {
    await t.app.get(DataSource).query('DELETE FROM ${n.table}');
    for (const name of ['One', 'Two', 'Three']) expect((await create({ name })).statusCode).toBe(201);
  });

  it('lists a page, oldest first, with its meta and paging headers', async () => {
    const res = await get('/${n.name}?limit=2&offset=1');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((item: { name: string }) => item.name)).toEqual(['Two', 'Three']);
    expect(res.json().meta).toEqual({ limit: 2, offset: 1, total: 3, next: null });
    expect(res.headers).toMatchObject({ 'x-pagination-total': '3', 'x-pagination-page': '1', 'x-pagination-per-page': '2' });
    expect((await get('/${n.name}?limit=2')).json().meta.next).toBe('/${n.name}?limit=2&offset=2');
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=ten'])('refuses %s (400)', async (query) => {
    expectProblem(await get(\`/${n.name}?\${query}\`), 400, 'validation');
  });
});

describe('GET /${n.name}/{id}', () => {
  it('answers an unknown id with 404, and an id that is not a UUID with 400', async () => {
    expectProblem(await get(\`/${n.name}/\${randomUUID()}\`), 404, 'not-found');
    expectProblem(await get('/${n.name}/42'), 400, 'validation');
  });
});
`,

  [`test/support/creates/${n.name}.ts`]: `import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the ${n.many} feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
  create${n.Singular}: async (ctx, extra) => {
    const res = await post(ctx, '/${n.name}', { name: 'First ${n.one}' }, { authorization: ctx.user.bearer }, extra);
    return { status: res.statusCode, location: res.headers.location, path: \`/${n.name}/\${res.json().id}\` };
  },
};
`,

  [`test/client/features/${n.name}.ts`]: `import { randomUUID } from 'node:crypto';

import { check, type ClientContext, expectData, expectProblem } from '../support';

/** Ada adds ${n.many}. */
export const after = ['users'];

/** ${n.Title}: create, list, get. */
export async function exercise({ anyone, shared }: ClientContext): Promise<void> {
  const { ada } = shared('people');
  const created = await expectData(
    ada.api.POST('/${n.name}', { body: { name: 'First ${n.one}' } }),
    201,
    'create a ${n.one}',
  );
  check(created.creatorId === ada.id && created.name === 'First ${n.one}', 'the new ${n.one} is its creator’s');
  await expectProblem(
    anyone.POST('/${n.name}', { body: { name: 'Nobody’s' } }),
    401,
    'unauthenticated',
    'create a ${n.one} without credentials',
  );
  await expectProblem(ada.api.POST('/${n.name}', { body: { name: '' } }), 400, 'validation', 'create a ${n.one} without a name');

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
    'a ${n.one}',
  );
  check(read.name === created.name && read.createdAt === created.createdAt, 'the ${n.one} as created');
  await expectProblem(
    anyone.GET('/${n.name}/{id}', { params: { path: { id: randomUUID() } } }),
    404,
    'not-found',
    'an unknown ${n.one}',
  );
  await expectProblem(
    anyone.GET('/${n.name}/{id}', { params: { path: { id: 'not-a-uuid' } } }),
    400,
    'validation',
    'a ${n.one} id that is not a UUID',
  );
}
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

// The template texts a top-level and a nested feature share (top-level.mjs, nested.mjs), each
// written once: see scripts/new-module.mjs. Each takes the names `n` (see names.mjs) and `p`,
// the parent of a nested feature (of PARENTS in nested.mjs), undefined for a top-level one; `p`
// puts in its values and the lines a list under a parent has. What else only one shape says
// (its prose, the endpoints and tests only it has) comes from that shape's file.
import { EXAMPLE_ID } from './names.mjs';

/**
 * The parts of the shared texts that hold a list's scope, all empty for a top-level feature:
 * the parameter that names the parent, as declared (`param`) and as passed on (`arg`), and the
 * suffix of the repository's methods that read one parent's items (`Of`).
 */
const scopeOf = (p) =>
  p ? { param: `${p.param}: ${p.type}, `, arg: `${p.param}, `, Of: `Of${p.One}` } : { param: '', arg: '', Of: '' };

/** The list's route, as the OpenAPI document writes it: /<name>, or under an item of the parent. */
export const listRoute = (n, p) => (p ? `${p.path}/{${p.param}}/${n.name}` : `/${n.name}`);

/** The index in the list's order, which leads with the parent's column when there is one. */
const listIndex = (n, p) => `${n.table}_${p ? `${p.column}_` : ''}created_at_id_idx`;

/** `text` as a TypeScript string, in the quotes Prettier gives it. */
const quoted = (text) => (text.includes("'") ? `"${text}"` : `'${text}'`);

/**
 * The 404 of an unknown item of `one`, as @ApiProblems takes it: its example is the `error`
 * class the service throws, made for the id `id` (as TypeScript writes it). Broken over lines,
 * as Prettier then keeps it, also where the whole would fit on one.
 */
const notFoundProblem = (error, one, id) => `{
    types: [NOT_FOUND],
    description: 'No ${one} with this id.',
    examples: [() => new ${error}(${id})],
  }`;

/** The feature's public surface, the only way in that npm run lint:deps allows. */
export const indexFile = (
  n,
) => `// The ${n.name} feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { ${n.Plural}Module } from './${n.name}.module';
`;

/** `doc` is the module's doc comment; a nested feature imports its parent's module. */
export const moduleFile = (n, p, doc) => `import { Module } from '@nestjs/common';

${p ? `import { ${p.Module} } from '../${p.feature}';\n` : ''}import { ${n.Plural}Controller } from './${n.name}.controller';
import { ${n.Plural}Repository } from './${n.name}.repository';
import { ${n.Plural}Service } from './${n.name}.service';

${doc}
@Module({
${p ? `  imports: [${p.Module}],\n` : ''}  controllers: [${n.Plural}Controller],
  providers: [${n.Plural}Repository, ${n.Plural}Service],
})
export class ${n.Plural}Module {}
`;

/**
 * The list (GET) and the create (POST) of the feature's items, and GET of one by id. `parts`:
 * `imports`, the names the controller imports from @nestjs/common (`common`), @nestjs/swagger
 * (`swagger`), ../common/problem (`problems`) and ../common/swagger (`swaggerHelpers`); `doc`,
 * the class's doc comment, if any; the summaries and descriptions of the list's and the create's
 * operations; `more`, the endpoints only one shape has. A nested feature's list and create take
 * the parent's id and answer its 404 (PLANET_NOT_FOUND), and its item's 404 is a constant too
 * (OBSERVATION_NOT_FOUND, say), for `more` to use.
 */
export const controllerFile = (n, p, parts) => {
  const { arg } = scopeOf(p);
  const listRouteParam = p ? `'${p.path.slice(1)}/:${p.param}/${n.name}'` : '';
  const parentParam = p ? `  @ApiParam(${p.PARAM_DOC})\n` : '';
  const parentArgument = p ? `@${p.ParamDecorator}() ${p.param}: ${p.type},\n    ` : '';
  const parentNotFound = p ? `${p.ONE}_NOT_FOUND,\n    ` : '';
  const operation = (operationId, summary, description) =>
    `@ApiOperation({ operationId: '${operationId}', summary: ${quoted(summary)}, description: ${quoted(description)} })`;
  return `import { ${parts.imports.common} } from '@nestjs/common';
import { ${parts.imports.swagger} } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
${p ? `import { ${p.PARAM_DOC}, ${p.ParamDecorator}, ${p.NotFoundError} } from '../${p.feature}';\n` : ''}import { Public } from '../common/auth';
import { absoluteUrl, locationHeader } from '../common/http';
import { offsetPage, OffsetPageQueryDto, PAGINATION_HEADERS } from '../common/paging';
import { ${parts.imports.problems} } from '../common/problem';
import { ${parts.imports.swaggerHelpers} } from '../common/swagger';
import { invalidBody, invalidQuery, notAUuid, UuidParam } from '../common/validation';
import { AppConfig } from '../config';
import { ${n.Singular}Dto } from './dto/${n.singular}.dto';
import { ${n.Singular}InputDto } from './dto/${n.singular}-input.dto';
import { ${n.Singular}PageDto } from './dto/${n.singular}-page.dto';
import { ${n.Singular}NotFoundError, ${n.Plural}Service } from './${n.name}.service';

const itemPath = (id: string): string => \`/${n.name}/\${id}\`;
${p ? `const listPath = (${p.param}: ${p.type}): string => \`${p.path}/\${${p.param}}/${n.name}\`;\n` : ''}const ID_PARAM = { name: 'id', format: 'uuid', description: "The ${n.one}'s id." } as const;
${
  p
    ? `const ${p.ONE}_NOT_FOUND = ${notFoundProblem(p.NotFoundError, p.one, p.exampleId)};
const ${n.CONSTANT}_NOT_FOUND = ${notFoundProblem(`${n.Singular}NotFoundError`, n.one, `'${EXAMPLE_ID}'`)};
`
    : ''
}
${parts.doc ?? ''}@ApiTags('${n.Title}')
@Controller(${p ? '' : `'${n.name}'`})
export class ${n.Plural}Controller {
  constructor(
    private readonly ${n.plural}: ${n.Plural}Service,
    private readonly config: AppConfig,
  ) {}

  @Get(${listRouteParam})
  @Public()
  ${operation(`list${n.Plural}`, parts.listSummary, parts.listDescription)}
${parentParam}  @ApiOkResponse({ type: ${n.Singular}PageDto, headers: PAGINATION_HEADERS, description: 'A page of ${n.many}' })
  @ApiProblems(
    {
      types: [VALIDATION],
      description: '${p ? `${p.paramRule}, ` : ''}limit is not an integer from 1 to 100, or offset not an integer from 0.',
      examples: [invalidQuery(OffsetPageQueryDto, { limit: '0' })],
    },
    ${parentNotFound}UNAVAILABLE,
  )
  async list${n.Plural}(
    ${parentArgument}@Query() query: OffsetPageQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}PageDto> {
    const { items, total } = await this.${n.plural}.list${n.Plural}(${arg}query.limit, query.offset);
    const page = offsetPage(${p ? `listPath(${p.param})` : `'/${n.name}'`}, query, total);
    reply.headers(page.headers);
    return { data: items.map((item) => ${n.Singular}Dto.from(item)), meta: page.meta };
  }

  @Post(${listRouteParam})
  @UserAuth()
  ${operation(`create${n.Singular}`, parts.createSummary, parts.createDescription)}
${parentParam}  @ApiBody({ type: ${n.Singular}InputDto })
  @ApiCreatedResponse({
    type: ${n.Singular}Dto,
    description: 'Created',
    headers: locationHeader('The URI of the new ${n.one}.', '/${n.name}/${EXAMPLE_ID}'),
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: ${p ? `${p.paramRule}, or ` : ''}a name that is missing, empty, longer than 100 characters or not plain text, or unknown fields.',
      invalidBody(${n.Singular}InputDto, { name: '' }),
    ),
    ${parentNotFound}UNAVAILABLE,
  )
  async create${n.Singular}(
    ${parentArgument}@CurrentUser() user: AuthenticatedUser,
    @Body() body: ${n.Singular}InputDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}Dto> {
    const created = ${n.Singular}Dto.from(await this.${n.plural}.create${n.Singular}(${arg}user.id, body.name));
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, itemPath(created.id)));
    return created;
  }

  @Get('${p ? `${n.name}/` : ''}:id')
  @Public()
  @ApiOperation({ operationId: 'get${n.Singular}', summary: 'Get ${n.aOne}' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ${n.Singular}Dto, description: 'The ${n.one}' })
  @ApiProblems(
    { types: [VALIDATION], description: 'id is not a UUID.', examples: [() => notAUuid('id')] },
    ${p ? `${n.CONSTANT}_NOT_FOUND` : notFoundProblem(`${n.Singular}NotFoundError`, n.one, `'${EXAMPLE_ID}'`)},
    UNAVAILABLE,
  )
  async get${n.Singular}(@UuidParam('id') id: string): Promise<${n.Singular}Dto> {
    return ${n.Singular}Dto.from(await this.${n.plural}.get${n.Singular}(id));
  }
${parts.more ?? ''}}
`;
};

/**
 * The service: the list, its page and count side by side (a nested feature's first answers
 * the parent's 404), and get by id. `parts`: `problems`, the errors it imports; `listDoc`, the
 * list's doc comment; `create`, the create; `more`, the methods only one shape has.
 */
export const serviceFile = (n, p, parts) => {
  const { param, arg, Of } = scopeOf(p);
  return `import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

${p ? `import { ${p.Lookup} } from '../${p.feature}';\n` : ''}import { Clock } from '../common/clock';
import { ${parts.problems} } from '../common/problem';
import type { ${n.Singular} } from './entities/${n.singular}.entity';
import { ${n.Plural}Repository } from './${n.name}.repository';

export class ${n.Singular}NotFoundError extends NotFoundError {
  constructor(id: string) {
    super(\`No ${n.one} with id \${id} exists.\`);
  }
}

export interface ${n.Singular}Page {
  items: ${n.Singular}[];
  total: number;
}

@Injectable()
export class ${n.Plural}Service {
  constructor(
    private readonly repository: ${n.Plural}Repository,
${p ? `    private readonly ${p.table}: ${p.Lookup},\n` : ''}    private readonly clock: Clock,
  ) {}

  /** ${parts.listDoc} */
  async list${n.Plural}(${param}limit: number, offset: number): Promise<${n.Singular}Page> {
${p ? `    await this.${p.table}.${p.assertExists}(${p.param});\n` : ''}    const [items, total] = await Promise.all([this.repository.findPage${Of}(${arg}limit, offset), this.repository.count${Of}(${p ? p.param : ''})]);
    return { items, total };
  }

  async get${n.Singular}(id: string): Promise<${n.Singular}> {
    const found = await this.repository.findById(id);
    if (!found) throw new ${n.Singular}NotFoundError(id);
    return found;
  }

${parts.create}${parts.more ?? ''}}
`;
};

/**
 * All SQL of the feature: a page of the list and its count, one by id, and the insert (a nested
 * feature's, in the transaction that holds the parent); `more`, the methods only one shape has.
 */
export const repositoryFile = (n, p, more = '') => {
  const { param, Of } = scopeOf(p);
  return `import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

${p ? `import { managerOf, type Transaction } from '../database';\n` : ''}import { ${n.Singular} } from './entities/${n.singular}.entity';

/** All SQL of the ${n.many}. */
@Injectable()
export class ${n.Plural}Repository {
  constructor(private readonly dataSource: DataSource) {}

  /** Oldest first, the id settling ties: the order of the index ${listIndex(n, p)}. */
  findPage${Of}(${param}limit: number, offset: number): Promise<${n.Singular}[]> {
    return this.dataSource
      .getRepository(${n.Singular})
      .find({ ${p ? `where: { ${p.param} }, ` : ''}order: { createdAt: 'ASC', id: 'ASC' }, take: limit, skip: offset });
  }

  count${Of}(${p ? `${p.param}: ${p.type}` : ''}): Promise<number> {
    return this.dataSource.getRepository(${n.Singular}).${p ? `countBy({ ${p.param} })` : 'count()'};
  }

  findById(id: string): Promise<${n.Singular} | null> {
    return this.dataSource.getRepository(${n.Singular}).findOneBy({ id });
  }

${p ? `  /** In the transaction that holds the ${p.one}. */\n` : ''}  async insert(${p ? 'tx: Transaction, ' : ''}row: ${n.Singular}): Promise<${n.Singular}> {
    await ${p ? 'managerOf(tx)' : 'this.dataSource'}.getRepository(${n.Singular}).insert(row);
    return row;
  }
${more}}
`;
};

/** `doc` is the entity's doc comment; a nested item's row holds its parent's id. */
export const entityFile = (n, p, doc) => `import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';

${doc}
@Entity('${n.table}')
${p ? `// Leads with ${p.column}: serves the foreign key and "the ${n.many} of this ${p.one}, in order".\n` : ''}@Index('${listIndex(n, p)}', [${p ? `'${p.param}', ` : ''}'createdAt', 'id'])
@Index('${n.table}_creator_id_idx', ['creatorId'])
export class ${n.Singular} {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: '${n.table}_pkey' })
  id: string;

${
  p
    ? `  @Column({ name: '${p.column}', type: '${p.sqlType}' })
  @ForeignKey('${p.table}', 'id', { name: '${n.table}_${p.column}_fkey', onDelete: 'CASCADE' })
  ${p.param}: ${p.type};

`
    : ''
}  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'creator_id', type: 'integer' })
  @ForeignKey('users', 'id', { name: '${n.table}_creator_id_fkey', onDelete: 'RESTRICT' })
  creatorId: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
`;

/** The table of the entity: `doc` is the migration's doc comment, `listIndexComment` the list index's. */
export const migrationFile = (
  n,
  p,
  { doc, listIndexComment },
) => `import { MigrationInterface, QueryRunner } from 'typeorm';

${doc}
export class ${n.Plural}${n.timestamp} implements MigrationInterface {
  name = '${n.Plural}${n.timestamp}';

  async up(q: QueryRunner): Promise<void> {
    await q.query(\`CREATE TABLE "${n.table}" (
      "id" uuid NOT NULL,
${p ? `      "${p.column}" ${p.sqlType} NOT NULL,\n` : ''}      "name" character varying(100) NOT NULL,
      "creator_id" integer NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      CONSTRAINT "${n.table}_pkey" PRIMARY KEY ("id"))\`);
    // ${listIndexComment}
    await q.query(\`CREATE INDEX "${listIndex(n, p)}" ON "${n.table}" (${p ? `"${p.column}", ` : ''}"created_at", "id")\`);
    // The foreign key's index: a user's ${n.many}, and checks when a user row changes.
    await q.query(\`CREATE INDEX "${n.table}_creator_id_idx" ON "${n.table}" ("creator_id")\`);
${p ? `    await q.query(\`ALTER TABLE "${n.table}" ADD CONSTRAINT "${n.table}_${p.column}_fkey" FOREIGN KEY ("${p.column}") REFERENCES "${p.table}"("id") ON DELETE CASCADE ON UPDATE NO ACTION\`);\n` : ''}    await q.query(
      \`ALTER TABLE "${n.table}" ADD CONSTRAINT "${n.table}_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION\`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(\`DROP TABLE "${n.table}"\`);
  }
}
`;

/** The item as the API answers it; a nested item's holds its parent's id. */
export const dtoFile = (n, p) => `import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import type { ${n.Singular} } from '../entities/${n.singular}.entity';

@ApiSchema({ name: '${n.Singular}' })
export class ${n.Singular}Dto {
  @ApiProperty({ format: 'uuid', readOnly: true, example: '${EXAMPLE_ID}' })
  id: string;

${
  p
    ? `  @ApiProperty({
    type: 'integer',
    format: 'int64',
    readOnly: true,
    description: 'The id of the ${p.one} it belongs to.',
    example: ${p.exampleId},
  })
  ${p.param}: ${p.type};

`
    : ''
}  @ApiProperty({ example: 'First ${n.one}' })
  name: string;

  @ApiProperty({ type: 'integer', format: 'int64', readOnly: true, description: 'The id of the user who created it.', example: 1 })
  creatorId: number;

  @ApiProperty({ format: 'date-time', readOnly: true, example: '2026-11-01T08:00:00.000Z' })
  createdAt: string;

  static from(item: ${n.Singular}): ${n.Singular}Dto {
    return { id: item.id, ${p ? `${p.param}: item.${p.param}, ` : ''}name: item.name, creatorId: item.creatorId, createdAt: item.createdAt.toISOString() };
  }
}
`;

/** The body of the create. */
export const inputDtoFile = (n, p) => `import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length } from 'class-validator';

import { IsPlainText, PLAIN_TEXT_RULE, trim } from '../../common/validation';

/** The body of POST ${listRoute(n, p)}. */
@ApiSchema({ name: '${n.Singular}Input' })
export class ${n.Singular}InputDto {
  @ApiProperty({ minLength: 1, maxLength: 100, description: \`Trimmed. \${PLAIN_TEXT_RULE}\`, example: 'First ${n.one}' })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @IsPlainText()
  name: string;
}
`;

/** A page of the list. */
export const pageDtoFile = (n) => `import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { PageMetaDto } from '../../common/paging';
import { ${n.Singular}Dto } from './${n.singular}.dto';

@ApiSchema({ name: 'Paginated${n.Plural}' })
export class ${n.Singular}PageDto {
  @ApiProperty({ type: () => [${n.Singular}Dto] })
  data: ${n.Singular}Dto[];

  @ApiProperty({ type: () => PageMetaDto })
  meta: PageMetaDto;
}
`;

// ---------------------------------------------------------------------------------------
// Tests

/**
 * The service's unit test, on a mocked repository (and a nested feature's, the parent's
 * lookup, which runs the work it holds in TX) and a Clock that says NOW; `tests`, its cases.
 */
export const unitTestFile = (
  n,
  p,
  tests,
) => `${p ? `import { ${p.Lookup} } from '../../src/${p.feature}';\n` : ''}import type { Clock } from '../../src/common/clock/clock';
${p ? `import { NotFoundError } from '../../src/common/problem';\nimport type { Transaction } from '../../src/database';\n` : ''}import { ${n.Plural}Repository } from '../../src/${n.name}/${n.name}.repository';
import { ${n.Plural}Service } from '../../src/${n.name}/${n.name}.service';
import { automock } from '../support/service-mocks';

const NOW = new Date('2026-11-22T10:15:00.000Z');
const ID = '${EXAMPLE_ID}';
${
  p
    ? `const ${p.ONE}_ID = ${p.exampleId};
/** The transaction that holds the ${p.one}: a repository call given it ran inside. */
const TX = { name: 'the ${p.one} held' } as unknown as Transaction;
`
    : ''
}
function new${n.Plural}ServiceTest() {
  const repository = automock(${n.Plural}Repository);
${p ? `  const ${p.table} = automock(${p.Lookup});\n` : ''}  const clock = { now: () => new Date(NOW) } satisfies Clock;
  return { sut: new ${n.Plural}Service(repository, ${p ? `${p.table}, ` : ''}clock), repository${p ? `, ${p.table}` : ''} };
}

describe(${n.Plural}Service.name, () => {
  let sut: ${n.Plural}Service;
  let repository: jest.Mocked<${n.Plural}Repository>;
${p ? `  let ${p.table}: jest.Mocked<${p.Lookup}>;\n` : ''}
  beforeEach(() => {
    ({ sut, repository${p ? `, ${p.table}` : ''} } = new${n.Plural}ServiceTest());
${p ? `    ${p.table}.${p.withHeld}.mockImplementation((_id, work) => work(TX));\n` : ''}  });

${tests}});
`;

/** The unit test's case of get by id. */
export const unknownIdTest = (n) => `  it('answers an unknown id with the not-found error', async () => {
    repository.findById.mockResolvedValue(null);

    await expect(sut.get${n.Singular}(ID)).rejects.toMatchObject({ status: 404, slug: 'not-found' });
  });
`;

/**
 * The e2e test's start: an app, its users (by name), and a Clock a second on at each call.
 * `imports` are the test's own; `close`, how it closes the app.
 */
export const e2eTestStart = (n, { imports = '', users, close }) => `import { randomUUID } from 'node:crypto';

${imports}import { Clock } from '../../src/common/clock/clock';
import { expectProblem } from '../support/problems';
import { startTestApp, TestApp } from '../support/test-app';
import { newUser, UserFixture } from '../support/users';

let t: TestApp;
${users.map((user) => `let ${user.toLowerCase()}: UserFixture;\n`).join('')}let now = Date.parse('2026-11-22T10:00:00.000Z');

beforeAll(async () => {
  t = await startTestApp();
${users.map((user) => `  ${user.toLowerCase()} = await newUser(t, { name: '${user}' });\n`).join('')}  // A second between two ${n.many}, so that "oldest first" is one order.
  jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date((now += 1000)));
});
afterAll(async () => ${close});
`;

/** The e2e cases of a create refused: `arg` is what the test's `create` takes before the body. */
export const createRefusals = (arg) => `  it('refuses a caller without valid credentials (401)', async () => {
    expectProblem(await create(${arg}{ name: 'Nobody' }, {}), 401);
    expectProblem(await create(${arg}{ name: 'Nobody' }, { authorization: 'Bearer not.a.token' }), 401);
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '   ' }],
    ['a name of 101 characters', { name: 'x'.repeat(101) }],
    ['a line break', { name: 'a\\nb' }],
    ['a name that is not text', { name: 42 }],
    ['an unknown field', { name: 'Fine', extra: true }],
  ])('refuses %s (400)', async (_, payload) => {
    expectProblem(await create(${arg}payload), 400, 'validation');
  });
`;

/** The e2e checks of `res`, the page at limit 2 and offset 1 of a list of three, One, Two and Three. */
export const secondPageChecks = `    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((item: { name: string }) => item.name)).toEqual(['Two', 'Three']);
    expect(res.json().meta).toEqual({ limit: 2, offset: 1, total: 3, next: null });
    expect(res.headers).toMatchObject({ 'x-pagination-total': '3', 'x-pagination-page': '1', 'x-pagination-per-page': '2' });
`;

/** The e2e cases of GET /<name>/{id}. */
export const getItemTests = (n) => `describe('GET /${n.name}/{id}', () => {
  it('answers an unknown id with 404, and an id that is not a UUID with 400', async () => {
    expectProblem(await get(\`/${n.name}/\${randomUUID()}\`), 404, 'not-found');
    expectProblem(await get('/${n.name}/42'), 400, 'validation');
  });
});
`;

/** The feature's create for test/e2e/locations.e2e-spec.ts; a nested one's, under a parent of its own. */
export const createsFile = (n, p) => `import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the ${n.many} feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
${p ? `  // Under ${p.aOne} of its own; the Location is the ${n.one}'s own URI.\n` : ''}  create${n.Singular}: async (ctx, extra) => {
${p ? `    const parent = (await post(ctx, '${p.path}', ${p.body}, { authorization: ctx.user.bearer }, {})).json();\n` : ''}    const res = await post(ctx, ${p ? `\`${p.path}/\${parent.id}/${n.name}\`` : `'/${n.name}'`}, { name: 'First ${n.one}' }, { authorization: ctx.user.bearer }, extra);
    return { status: res.statusCode, location: res.headers.location, path: \`/${n.name}/\${res.json().id}\` };
  },
};
`;

/**
 * The start of the feature's part of the generated client's test: `support`, what it imports
 * from ../support; `afterDoc` and `doc`, the comments of `after` and `exercise`; `people`, whom
 * it takes of the shared people.
 */
export const clientTestStart = ({ support, afterDoc, doc, people }) => `import { randomUUID } from 'node:crypto';

import { ${support} } from '../support';

/** ${afterDoc} */
export const after = ['users'];

/** ${doc} */
export async function exercise({ anyone, shared }: ClientContext): Promise<void> {
  const { ${people} } = shared('people');
`;

/** The client's checks of the item it `read` back after it `created` it, and of GET /<name>/{id}'s answers. */
export const clientItemChecks = (
  n,
) => `  check(read.name === created.name && read.createdAt === created.createdAt, 'the ${n.one} as created');
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
    '${n.aOne} id that is not a UUID',
  );
`;

// The files of a nested feature: a list under an item of another feature,
// /<parent>/{parentId}/<name>, and /<name>/{id}: see scripts/new-module.mjs.
import { EXAMPLE_ID } from './names.mjs';

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
    exports: ['CelestialBodiesModule', 'PlanetsLookup', 'PlanetId', 'PLANET_ID_PARAM'],
    Module: 'CelestialBodiesModule',
    Lookup: 'PlanetsLookup',
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
  },
};

/** Each file the feature is made of, by path, for the names `n` (see names.mjs) under the parent `p` (of PARENTS). */
export const nestedFiles = (n, p) => ({
  [`src/${n.name}/index.ts`]: `// The ${n.name} feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { ${n.Plural}Module } from './${n.name}.module';
`,

  [`src/${n.name}/${n.name}.module.ts`]: `import { Module } from '@nestjs/common';

import { ${p.Module} } from '../${p.feature}';
import { ${n.Plural}Controller } from './${n.name}.controller';
import { ${n.Plural}Repository } from './${n.name}.repository';
import { ${n.Plural}Service } from './${n.name}.service';

/**
 * ${n.Title} of a ${p.one}: a public list under each ${p.one}; signed-in users add to it, and only
 * its creator deletes one. ${p.Module} gives ${p.Lookup}.
 */
@Module({
  imports: [${p.Module}],
  controllers: [${n.Plural}Controller],
  providers: [${n.Plural}Repository, ${n.Plural}Service],
})
export class ${n.Plural}Module {}
`,

  [`src/${n.name}/${n.name}.controller.ts`]: `import { Body, Controller, Delete, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
import { ${p.PARAM_DOC}, ${p.ParamDecorator} } from '../${p.feature}';
import { Public } from '../common/auth';
import { absoluteUrl, locationHeader } from '../common/http';
import { offsetPage, OffsetPageQueryDto, PAGINATION_HEADERS } from '../common/paging';
import { FORBIDDEN, NOT_FOUND, UNAVAILABLE, VALIDATION } from '../common/problem';
import { ApiProblems, jsonBodyProblems, unexpectedBodyProblems } from '../common/swagger';
import { UuidParam } from '../common/validation';
import { AppConfig } from '../config';
import { ${n.Singular}Dto } from './dto/${n.singular}.dto';
import { ${n.Singular}InputDto } from './dto/${n.singular}-input.dto';
import { ${n.Singular}PageDto } from './dto/${n.singular}-page.dto';
import { ${n.Plural}Service } from './${n.name}.service';

const itemPath = (id: string): string => \`/${n.name}/\${id}\`;
const listPath = (${p.param}: ${p.type}): string => \`${p.path}/\${${p.param}}/${n.name}\`;
const ID_PARAM = { name: 'id', format: 'uuid', description: "The ${n.one}'s id." } as const;
const ${p.ONE}_NOT_FOUND = {
  types: [NOT_FOUND],
  description: 'No ${p.one} with this id.',
  detail: 'No ${p.one} with id ${p.exampleId} exists.',
};
const ${n.CONSTANT}_NOT_FOUND = {
  types: [NOT_FOUND],
  description: 'No ${n.one} with this id.',
  detail: 'No ${n.one} with id ${EXAMPLE_ID} exists.',
};

/** The ${n.many} of a ${p.one} under ${p.path}/{${p.param}}/${n.name}, and each at /${n.name}/{id}. */
@ApiTags('${n.Title}')
@Controller()
export class ${n.Plural}Controller {
  constructor(
    private readonly ${n.plural}: ${n.Plural}Service,
    private readonly config: AppConfig,
  ) {}

  @Get('${p.path.slice(1)}/:${p.param}/${n.name}')
  @Public()
  @ApiOperation({
    operationId: 'list${n.Plural}',
    summary: "List a ${p.one}'s ${n.many}",
    description: 'A page of the ${n.many} of the ${p.one}, oldest first.',
  })
  @ApiParam(${p.PARAM_DOC})
  @ApiOkResponse({ type: ${n.Singular}PageDto, headers: PAGINATION_HEADERS, description: 'A page of ${n.many}' })
  @ApiProblems(
    {
      types: [VALIDATION],
      description: '${p.paramRule}, limit is not an integer from 1 to 100, or offset not an integer from 0.',
    },
    ${p.ONE}_NOT_FOUND,
    UNAVAILABLE,
  )
  async list${n.Plural}(
    @${p.ParamDecorator}() ${p.param}: ${p.type},
    @Query() query: OffsetPageQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}PageDto> {
    const { items, total } = await this.${n.plural}.list${n.Plural}(${p.param}, query.limit, query.offset);
    const page = offsetPage(listPath(${p.param}), query, total);
    reply.headers(page.headers);
    return { data: items.map((item) => ${n.Singular}Dto.from(item)), meta: page.meta };
  }

  @Post('${p.path.slice(1)}/:${p.param}/${n.name}')
  @UserAuth()
  @ApiOperation({
    operationId: 'create${n.Singular}',
    summary: 'Add a ${n.one} to a ${p.one}',
    description: 'You become its creator: only you can delete it.',
  })
  @ApiParam(${p.PARAM_DOC})
  @ApiBody({ type: ${n.Singular}InputDto })
  @ApiCreatedResponse({
    type: ${n.Singular}Dto,
    description: 'Created',
    headers: locationHeader('The URI of the new ${n.one}.', '/${n.name}/${EXAMPLE_ID}'),
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: ${p.paramRule}, or a name that is missing, empty, longer than 100 characters or not plain text, or unknown fields.',
    ),
    ${p.ONE}_NOT_FOUND,
    UNAVAILABLE,
  )
  async create${n.Singular}(
    @${p.ParamDecorator}() ${p.param}: ${p.type},
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: ${n.Singular}InputDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}Dto> {
    const created = ${n.Singular}Dto.from(await this.${n.plural}.create${n.Singular}(${p.param}, user.id, body.name));
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, itemPath(created.id)));
    return created;
  }

  @Get('${n.name}/:id')
  @Public()
  @ApiOperation({ operationId: 'get${n.Singular}', summary: 'Get a ${n.one}' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ${n.Singular}Dto, description: 'The ${n.one}' })
  @ApiProblems({ types: [VALIDATION], description: 'id is not a UUID.' }, ${n.CONSTANT}_NOT_FOUND, UNAVAILABLE)
  async get${n.Singular}(@UuidParam('id') id: string): Promise<${n.Singular}Dto> {
    return ${n.Singular}Dto.from(await this.${n.plural}.get${n.Singular}(id));
  }

  @Delete('${n.name}/:id')
  @HttpCode(204)
  @UserAuth()
  @ApiOperation({ operationId: 'delete${n.Singular}', summary: 'Delete a ${n.one}', description: 'Only its creator may.' })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(
    ...unexpectedBodyProblems('id is not a UUID.'),
    { types: [FORBIDDEN], description: 'The ${n.one} was created by another user.' },
    ${n.CONSTANT}_NOT_FOUND,
    UNAVAILABLE,
  )
  async delete${n.Singular}(@UuidParam('id') id: string, @CurrentUser() user: AuthenticatedUser): Promise<void> {
    await this.${n.plural}.delete${n.Singular}(id, user.id);
  }
}
`,

  [`src/${n.name}/${n.name}.service.ts`]: `import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { ${p.Lookup} } from '../${p.feature}';
import { Clock } from '../common/clock';
import { ForbiddenError, NotFoundError } from '../common/problem';
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
    private readonly ${p.table}: ${p.Lookup},
    private readonly clock: Clock,
  ) {}

  /** The ${p.one}'s 404 when it does not exist; else its page and count, side by side. */
  async list${n.Plural}(${p.param}: ${p.type}, limit: number, offset: number): Promise<${n.Singular}Page> {
    await this.${p.table}.${p.assertExists}(${p.param});
    const [items, total] = await Promise.all([
      this.repository.findPageOf${p.One}(${p.param}, limit, offset),
      this.repository.countOf${p.One}(${p.param}),
    ]);
    return { items, total };
  }

  async get${n.Singular}(id: string): Promise<${n.Singular}> {
    const found = await this.repository.findById(id);
    if (!found) throw new NotFoundError(\`No ${n.one} with id \${id} exists.\`);
    return found;
  }

  /**
   * One INSERT, in a transaction that holds the ${p.one}: the ${p.one}'s 404 when it does not
   * exist, and it cannot be deleted before the ${n.one} is in (a delete of the ${p.one} then
   * takes its ${n.many} with it).
   */
  create${n.Singular}(${p.param}: ${p.type}, creatorId: number, name: string): Promise<${n.Singular}> {
    const row = { id: randomUUID(), ${p.param}, name, creatorId, createdAt: this.clock.now() };
    return this.${p.table}.${p.withHeld}(${p.param}, (tx) => this.repository.insert(tx, row));
  }

  /** Only its creator may: one DELETE of the creator's row; when it deletes nothing, why. */
  async delete${n.Singular}(id: string, userId: number): Promise<void> {
    if (await this.repository.deleteOfCreator(id, userId)) return;
    const found = await this.repository.findById(id);
    if (!found) throw new NotFoundError(\`No ${n.one} with id \${id} exists.\`);
    throw new ForbiddenError(\`${n.Singular} \${id} was created by another user; only its creator may delete it.\`);
  }
}
`,

  [`src/${n.name}/${n.name}.repository.ts`]: `import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { managerOf, type Transaction } from '../database';
import { ${n.Singular} } from './entities/${n.singular}.entity';

/** All SQL of the ${n.many}. */
@Injectable()
export class ${n.Plural}Repository {
  constructor(private readonly dataSource: DataSource) {}

  /** Oldest first, the id settling ties: the order of the index ${n.table}_${p.column}_created_at_id_idx. */
  findPageOf${p.One}(${p.param}: ${p.type}, limit: number, offset: number): Promise<${n.Singular}[]> {
    return this.dataSource
      .getRepository(${n.Singular})
      .find({ where: { ${p.param} }, order: { createdAt: 'ASC', id: 'ASC' }, take: limit, skip: offset });
  }

  countOf${p.One}(${p.param}: ${p.type}): Promise<number> {
    return this.dataSource.getRepository(${n.Singular}).countBy({ ${p.param} });
  }

  findById(id: string): Promise<${n.Singular} | null> {
    return this.dataSource.getRepository(${n.Singular}).findOneBy({ id });
  }

  /** In the transaction that holds the ${p.one}. */
  async insert(tx: Transaction, row: ${n.Singular}): Promise<${n.Singular}> {
    await managerOf(tx).getRepository(${n.Singular}).insert(row);
    return row;
  }

  /** DELETE ... WHERE id AND creator_id: whether there was such a row. */
  async deleteOfCreator(id: string, creatorId: number): Promise<boolean> {
    const { affected } = await this.dataSource.getRepository(${n.Singular}).delete({ id, creatorId });
    return (affected ?? 0) > 0;
  }
}
`,

  [`src/${n.name}/entities/${n.singular}.entity.ts`]: `import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';

/**
 * A ${n.one} of a ${p.one}, added by a signed-in user. The database keeps its ${p.one} and its
 * creator existing rows (foreign keys named by table, not by entity: the code never reads
 * those tables); it goes when its ${p.one} goes (ON DELETE CASCADE).
 */
@Entity('${n.table}')
// Leads with ${p.column}: serves the foreign key and "the ${n.many} of this ${p.one}, in order".
@Index('${n.table}_${p.column}_created_at_id_idx', ['${p.param}', 'createdAt', 'id'])
@Index('${n.table}_creator_id_idx', ['creatorId'])
export class ${n.Singular} {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: '${n.table}_pkey' })
  id: string;

  @Column({ name: '${p.column}', type: '${p.sqlType}' })
  @ForeignKey('${p.table}', 'id', { name: '${n.table}_${p.column}_fkey', onDelete: 'CASCADE' })
  ${p.param}: ${p.type};

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

/** ${n.Title} of ${p.table}. Needs \`${p.table}\` and \`users\` (the ${p.one} and the creator of each ${n.one}). */
export class ${n.Plural}${n.timestamp} implements MigrationInterface {
  name = '${n.Plural}${n.timestamp}';

  async up(q: QueryRunner): Promise<void> {
    await q.query(\`CREATE TABLE "${n.table}" (
      "id" uuid NOT NULL,
      "${p.column}" ${p.sqlType} NOT NULL,
      "name" character varying(100) NOT NULL,
      "creator_id" integer NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      CONSTRAINT "${n.table}_pkey" PRIMARY KEY ("id"))\`);
    // A ${p.one}'s list, in its order; and the foreign key's index (a delete of a ${p.one} finds its ${n.many}).
    await q.query(
      \`CREATE INDEX "${n.table}_${p.column}_created_at_id_idx" ON "${n.table}" ("${p.column}", "created_at", "id")\`,
    );
    // The foreign key's index: a user's ${n.many}, and checks when a user row changes.
    await q.query(\`CREATE INDEX "${n.table}_creator_id_idx" ON "${n.table}" ("creator_id")\`);
    await q.query(
      \`ALTER TABLE "${n.table}" ADD CONSTRAINT "${n.table}_${p.column}_fkey" FOREIGN KEY ("${p.column}") REFERENCES "${p.table}"("id") ON DELETE CASCADE ON UPDATE NO ACTION\`,
    );
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

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    readOnly: true,
    description: 'The id of the ${p.one} it belongs to.',
    example: ${p.exampleId},
  })
  ${p.param}: ${p.type};

  @ApiProperty({ example: 'First ${n.one}' })
  name: string;

  @ApiProperty({ type: 'integer', format: 'int64', readOnly: true, description: 'The id of the user who created it.', example: 1 })
  creatorId: number;

  @ApiProperty({ format: 'date-time', readOnly: true, example: '2026-11-01T08:00:00.000Z' })
  createdAt: string;

  static from(item: ${n.Singular}): ${n.Singular}Dto {
    return {
      id: item.id,
      ${p.param}: item.${p.param},
      name: item.name,
      creatorId: item.creatorId,
      createdAt: item.createdAt.toISOString(),
    };
  }
}
`,

  [`src/${n.name}/dto/${n.singular}-input.dto.ts`]: `import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length } from 'class-validator';

import { IsPlainText, PLAIN_TEXT_RULE, trim } from '../../common/validation';

/** The body of POST ${p.path}/{${p.param}}/${n.name}. */
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

  [`test/unit/${n.name}.service.spec.ts`]: `import { ${p.Lookup} } from '../../src/${p.feature}';
import type { Clock } from '../../src/common/clock/clock';
import { NotFoundError } from '../../src/common/problem';
import type { Transaction } from '../../src/database';
import { ${n.Plural}Repository } from '../../src/${n.name}/${n.name}.repository';
import { ${n.Plural}Service } from '../../src/${n.name}/${n.name}.service';
import { automock } from '../support/service-mocks';

const NOW = new Date('2026-11-22T10:15:00.000Z');
const ID = '${EXAMPLE_ID}';
const ${p.ONE}_ID = ${p.exampleId};
/** The transaction that holds the ${p.one}: a repository call given it ran inside. */
const TX = { name: 'the ${p.one} held' } as unknown as Transaction;

function new${n.Plural}ServiceTest() {
  const repository = automock(${n.Plural}Repository);
  const ${p.table} = automock(${p.Lookup});
  const clock = { now: () => new Date(NOW) } satisfies Clock;
  return { sut: new ${n.Plural}Service(repository, ${p.table}, clock), repository, ${p.table} };
}

describe(${n.Plural}Service.name, () => {
  let sut: ${n.Plural}Service;
  let repository: jest.Mocked<${n.Plural}Repository>;
  let ${p.table}: jest.Mocked<${p.Lookup}>;

  beforeEach(() => {
    ({ sut, repository, ${p.table} } = new${n.Plural}ServiceTest());
    ${p.table}.${p.withHeld}.mockImplementation((_id, work) => work(TX));
  });

  it('creates a ${n.one} in the transaction that holds its ${p.one}, with an id of its own, its creator and the time of the Clock', async () => {
    repository.insert.mockImplementation(async (_tx, row) => row);

    const created = await sut.create${n.Singular}(${p.ONE}_ID, 7, 'First');

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

  it("answers a ${p.one} that does not exist with the ${p.one}'s 404, and inserts nothing", async () => {
    ${p.table}.${p.withHeld}.mockRejectedValue(new NotFoundError('No ${p.one} with id ${p.exampleId} exists.'));

    await expect(sut.create${n.Singular}(${p.ONE}_ID, 7, 'First')).rejects.toMatchObject({ status: 404, slug: 'not-found' });
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

  it("answers the list of a ${p.one} that does not exist with the ${p.one}'s 404", async () => {
    ${p.table}.${p.assertExists}.mockRejectedValue(new NotFoundError('No ${p.one} with id ${p.exampleId} exists.'));

    await expect(sut.list${n.Plural}(${p.ONE}_ID, 1, 10)).rejects.toMatchObject({ status: 404 });
    expect(repository.findPageOf${p.One}).not.toHaveBeenCalled();
  });

  it('answers an unknown id with the not-found error', async () => {
    repository.findById.mockResolvedValue(null);

    await expect(sut.get${n.Singular}(ID)).rejects.toMatchObject({ status: 404, slug: 'not-found' });
  });

  it('deletes a ${n.one} of its creator, and refuses another user (403) or an unknown id (404)', async () => {
    repository.deleteOfCreator.mockResolvedValueOnce(true);
    await expect(sut.delete${n.Singular}(ID, 7)).resolves.toBeUndefined();
    expect(repository.deleteOfCreator).toHaveBeenCalledWith(ID, 7);

    repository.deleteOfCreator.mockResolvedValue(false);
    repository.findById.mockResolvedValueOnce({ id: ID, ${p.param}: ${p.ONE}_ID, name: 'First', creatorId: 7, createdAt: NOW });
    await expect(sut.delete${n.Singular}(ID, 8)).rejects.toMatchObject({ status: 403, slug: 'forbidden' });
    repository.findById.mockResolvedValueOnce(null);
    await expect(sut.delete${n.Singular}(ID, 8)).rejects.toMatchObject({ status: 404, slug: 'not-found' });
  });
});
`,

  [`test/e2e/${n.name}.e2e-spec.ts`]: `import { randomUUID } from 'node:crypto';

import { Clock } from '../../src/common/clock/clock';
import { expectProblem } from '../support/problems';
import { startTestApp, TestApp } from '../support/test-app';
import { newUser, UserFixture } from '../support/users';

let t: TestApp;
let alice: UserFixture;
let bob: UserFixture;
let now = Date.parse('2026-11-22T10:00:00.000Z');

beforeAll(async () => {
  t = await startTestApp();
  alice = await newUser(t, { name: 'Alice' });
  bob = await newUser(t, { name: 'Bob' });
  // A second between two ${n.many}, so that "oldest first" is one order.
  jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date((now += 1000)));
});
afterAll(async () => t?.close());

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
const remove = (id: string, user?: UserFixture) =>
  t.request({ method: 'DELETE', url: \`/${n.name}/\${id}\`, headers: user ? { authorization: user.bearer } : {} });

describe('POST ${p.path}/{${p.param}}/${n.name}', () => {
  let ${p.param}: ${p.type};
  beforeAll(async () => {
    ${p.param} = await new${p.One}();
  });

  it('creates a ${n.one} of the caller under the ${p.one}, trimmed, at the time of the Clock, with its Location', async () => {
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

  it('answers a ${p.one} that does not exist with 404, and a ${p.param} that is no id with 400', async () => {
    expectProblem(await create(${p.unknownId}, { name: 'Lost' }), 404, 'not-found');
    expectProblem(await create('${p.invalidId}', { name: 'Lost' }), 400, 'validation');
  });

  it('refuses a caller without valid credentials (401)', async () => {
    expectProblem(await create(${p.param}, { name: 'Nobody' }, {}), 401);
    expectProblem(await create(${p.param}, { name: 'Nobody' }, { authorization: 'Bearer not.a.token' }), 401);
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '   ' }],
    ['a name of 101 characters', { name: 'x'.repeat(101) }],
    ['a line break', { name: 'a\\nb' }],
    ['a name that is not text', { name: 42 }],
    ['an unknown field', { name: 'Fine', extra: true }],
  ])('refuses %s (400)', async (_, payload) => {
    expectProblem(await create(${p.param}, payload), 400, 'validation');
  });
});

describe('GET ${p.path}/{${p.param}}/${n.name}', () => {
  let ${p.param}: ${p.type};
  beforeAll(async () => {
    ${p.param} = await new${p.One}();
    for (const name of ['One', 'Two', 'Three']) expect((await create(${p.param}, { name })).statusCode).toBe(201);
    // Another ${p.one}'s, which the list leaves out.
    expect((await create(await new${p.One}(), { name: 'Elsewhere' })).statusCode).toBe(201);
  });

  it("lists a page of the ${p.one}'s ${n.many}, oldest first, with its meta and paging headers", async () => {
    const res = await get(\`\${listUrl(${p.param})}?limit=2&offset=1\`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((item: { name: string }) => item.name)).toEqual(['Two', 'Three']);
    expect(res.json().meta).toEqual({ limit: 2, offset: 1, total: 3, next: null });
    expect(res.headers).toMatchObject({ 'x-pagination-total': '3', 'x-pagination-page': '1', 'x-pagination-per-page': '2' });
    expect((await get(\`\${listUrl(${p.param})}?limit=2\`)).json().meta.next).toBe(\`\${listUrl(${p.param})}?limit=2&offset=2\`);
  });

  it('answers a ${p.one} that does not exist with 404, and a ${p.param} that is no id with 400', async () => {
    expectProblem(await get(listUrl(${p.unknownId})), 404, 'not-found');
    expectProblem(await get(listUrl('${p.invalidId}')), 400, 'validation');
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=ten'])('refuses %s (400)', async (query) => {
    expectProblem(await get(\`\${listUrl(${p.param})}?\${query}\`), 400, 'validation');
  });
});

describe('GET /${n.name}/{id}', () => {
  it('answers an unknown id with 404, and an id that is not a UUID with 400', async () => {
    expectProblem(await get(\`/${n.name}/\${randomUUID()}\`), 404, 'not-found');
    expectProblem(await get('/${n.name}/42'), 400, 'validation');
  });
});

describe('DELETE /${n.name}/{id}', () => {
  it('lets its creator delete it (204), and no one else (403; 401 without credentials)', async () => {
    const { id } = (await create(await new${p.One}(), { name: 'Doomed' })).json();
    expectProblem(await remove(id, bob), 403, 'forbidden');
    expectProblem(await remove(id), 401);
    expect((await remove(id, alice)).statusCode).toBe(204);
    expectProblem(await get(\`/${n.name}/\${id}\`), 404, 'not-found');
    expectProblem(await remove(id, alice), 404, 'not-found');
    expectProblem(await remove('42', alice), 400, 'validation');
  });

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

  [`test/support/creates/${n.name}.ts`]: `import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the ${n.many} feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
  // Under a ${p.one} of its own; the Location is the ${n.one}'s own URI.
  create${n.Singular}: async (ctx, extra) => {
    const parent = (await post(ctx, '${p.path}', ${p.body}, { authorization: ctx.user.bearer }, {})).json();
    const res = await post(
      ctx,
      \`${p.path}/\${parent.id}/${n.name}\`,
      { name: 'First ${n.one}' },
      { authorization: ctx.user.bearer },
      extra,
    );
    return { status: res.statusCode, location: res.headers.location, path: \`/${n.name}/\${res.json().id}\` };
  },
};
`,

  [`test/client/features/${n.name}.ts`]: `import { randomUUID } from 'node:crypto';

import { check, type ClientContext, expectData, expectNoContent, expectProblem } from '../support';

/** Ada and Bob. */
export const after = ['users'];

/** ${n.Title} of a ${p.one}: create and list under it, get and delete each. */
export async function exercise({ anyone, shared }: ClientContext): Promise<void> {
  const { ada, bob } = shared('people');
  const parent = await expectData(ada.api.POST('${p.path}', { body: ${p.body} }), 201, 'a ${p.one} of Ada');
  const under = { params: { path: { ${p.param}: parent.id } } };
  // No ${p.one} has this id.
  const unknownParent = { params: { path: { ${p.param}: ${p.unknownId} } } };

  const created = await expectData(
    ada.api.POST('${p.path}/{${p.param}}/${n.name}', { ...under, body: { name: 'First ${n.one}' } }),
    201,
    'create a ${n.one}',
  );
  check(
    created.creatorId === ada.id && created.${p.param} === parent.id,
    "the new ${n.one} is its creator's, under the ${p.one}",
  );
  await expectProblem(
    anyone.POST('${p.path}/{${p.param}}/${n.name}', { ...under, body: { name: 'Nobody’s' } }),
    401,
    'unauthenticated',
    'create a ${n.one} without credentials',
  );
  await expectProblem(
    ada.api.POST('${p.path}/{${p.param}}/${n.name}', { ...under, body: { name: '' } }),
    400,
    'validation',
    'create a ${n.one} without a name',
  );
  await expectProblem(
    ada.api.POST('${p.path}/{${p.param}}/${n.name}', { ...unknownParent, body: { name: 'Lost' } }),
    404,
    'not-found',
    'create a ${n.one} under an unknown ${p.one}',
  );

  const page = await expectData(
    anyone.GET('${p.path}/{${p.param}}/${n.name}', { params: { ...under.params, query: { limit: 10 } } }),
    200,
    "a page of the ${p.one}'s ${n.many}",
  );
  check(page.data.length === 1 && page.meta.total === 1, 'the one ${n.one} of the ${p.one}');
  await expectProblem(
    anyone.GET('${p.path}/{${p.param}}/${n.name}', { params: { ...under.params, query: { limit: 0 } } }),
    400,
    'validation',
    'a page of 0 ${n.many}',
  );
  await expectProblem(
    anyone.GET('${p.path}/{${p.param}}/${n.name}', unknownParent),
    404,
    'not-found',
    'the ${n.many} of an unknown ${p.one}',
  );

  const item = { params: { path: { id: created.id } } };
  const read = await expectData(anyone.GET('/${n.name}/{id}', item), 200, 'a ${n.one}');
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

  await expectProblem(bob.api.DELETE('/${n.name}/{id}', item), 403, 'forbidden', "delete another's ${n.one}");
  await expectProblem(anyone.DELETE('/${n.name}/{id}', item), 401, 'unauthenticated', 'delete without credentials');
  await expectNoContent(ada.api.DELETE('/${n.name}/{id}', item), 204, 'delete a ${n.one}');
  await expectProblem(ada.api.DELETE('/${n.name}/{id}', item), 404, 'not-found', 'delete a deleted ${n.one}');
}
`,
});

/** The feature's entries in the lists that must hold every route, by file. */
export const nestedRoutes = (n, p) => ({
  'test/e2e/route-policies.e2e-spec.ts': `  'GET ${p.path}/:${p.param}/${n.name}': 'public',
  'POST ${p.path}/:${p.param}/${n.name}': 'user',
  'GET /${n.name}/:id': 'public',
  'DELETE /${n.name}/:id': 'user',`,
  'test/e2e/hostile-input.e2e-spec.ts': `  'GET ${p.path}/:${p.param}/${n.name}': { params: ${p.hostileParams} },
  'POST ${p.path}/:${p.param}/${n.name}': { params: ${p.hostileParams}, validBody: () => fc.constant({ name: 'First ${n.one}' }) },
  'GET /${n.name}/:id': {},
  'DELETE /${n.name}/:id': {},`,
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
  [1, 'GET /${n.name}/{id}', () => call('GET /${n.name}/{id} (unknown)', [404], \`/${n.name}/\${randomUUID()}\`)],
  [1, 'DELETE /${n.name}/{id}', () => call('DELETE /${n.name}/{id} (unknown)', [404], \`/${n.name}/\${randomUUID()}\`, { method: 'DELETE', auth: asUser(pick(users)) })],`,
});

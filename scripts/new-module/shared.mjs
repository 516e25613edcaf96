// The template texts the three shapes share (top-level.mjs, nested.mjs), each written once: see
// scripts/new-module.mjs. Each takes the names `n` (see names.mjs) and `p`, the parent of a
// nested feature (of PARENTS in nested.mjs), undefined for a top-level one; `p` puts in its
// values and the lines a list under a parent has. `n.ref`, when set, is the feature (of PARENTS)
// that a top-level item refers to by id in its body (`--refers-to planets`). Every shape has the
// same item routes, GET, PUT and DELETE /<name>/{id} (ETag, If-Match, creator-only changes); what
// else only one shape says (its prose, its list's tests) comes from that shape's file.
import { cap, EXAMPLE_ID } from './names.mjs';

/**
 * The parts of the shared texts that hold a list's scope, all empty for a top-level feature:
 * the parameter that names the parent, as declared (`param`) and as passed on (`arg`), and the
 * suffix of the repository's methods that read one parent's items (`Of`).
 */
const scopeOf = (p) =>
  p ? { param: `${p.param}: ${p.type}, `, arg: `${p.param}, `, Of: `Of${p.One}` } : { param: '', arg: '', Of: '' };

/**
 * The fields a client sets: the service's create and update take them as one \`<Singular>Values\`
 * (\`picked\` from the entity), which the controller passes as the body is, so a field added
 * to the entity and the input DTO reaches the row with no other edit. \`values\`, the object as
 * a unit test writes it; \`sample\`, a valid body as the e2e tests write it, \`ref\` the referred
 * item's id.
 */
export const fieldsOf = (n) =>
  n.ref
    ? {
        picked: `'${n.ref.param}' | 'name'`,
        values: (name) => `{ ${n.ref.param}: ${n.ref.exampleId}, name: ${name} }`,
        sample: (name, ref = n.ref.param) => `{ ${prop('name', name)}, ${prop(n.ref.param, ref)} }`,
      }
    : { picked: `'name'`, values: (name) => `{ name: ${name} }`, sample: (name) => `{ ${prop('name', name)} }` };

/** `key: value` as an object literal writes it, shorthand when the value is the variable of that name. */
const prop = (key, value) => (key === String(value) ? key : `${key}: ${value}`);

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
export const moduleFile = (n, p, doc) => {
  const uses = p ?? n.ref;
  return `import { Module } from '@nestjs/common';

${uses ? `import { ${uses.Module} } from '../${uses.feature}';\n` : ''}import { IdempotencyModule } from '../common/idempotency';
import { ${n.Plural}Controller } from './${n.name}.controller';
import { ${n.Plural}Repository } from './${n.name}.repository';
import { ${n.Plural}Service } from './${n.name}.service';

${doc}
@Module({
  imports: [${uses ? `${uses.Module}, ` : ''}IdempotencyModule],
  controllers: [${n.Plural}Controller],
  providers: [${n.Plural}Repository, ${n.Plural}Service],
})
export class ${n.Plural}Module {}
`;
};

/**
 * The list (GET) and the create (POST) of the feature's items, and GET, PUT and DELETE of one by
 * id. `parts`: `doc`, the class's doc comment, if any; the summaries and descriptions of the
 * list's and the create's operations. A nested feature's list and create take the parent's id and
 * answer its 404; a create that refers to another feature's item answers that item's 404.
 */
export const controllerFile = (n, p, parts) => {
  const { arg } = scopeOf(p);
  const listRouteParam = p ? `'${p.path.slice(1)}/:${p.param}/${n.name}'` : '';
  const itemRoute = `'${p ? `${n.name}/` : ''}:id'`;
  const parentParam = p ? `  @ApiParam(${p.PARAM_DOC})\n` : '';
  const parentArgument = p ? `@${p.ParamDecorator}() ${p.param}: ${p.type},\n    ` : '';
  const other = p ?? n.ref;
  const otherNotFound = other ? `${other.ONE}_NOT_FOUND,\n    ` : '';
  const bodyRule = n.ref
    ? `a name that is missing, empty, longer than 100 characters or not plain text, a ${n.ref.param} that is not a positive integer, or unknown fields`
    : 'a name that is missing, empty, longer than 100 characters or not plain text, or unknown fields';
  const invalidSample = n.ref ? `{ name: '', ${n.ref.param}: ${n.ref.exampleId} }` : "{ name: '' }";
  const operation = (operationId, summary, description) =>
    `@ApiOperation({ operationId: '${operationId}', summary: ${quoted(summary)}, description: ${quoted(description)} })`;
  return `import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { type AuthenticatedUser, CurrentUser, UserAuth } from '../auth';
${other ? `import { ${p ? `${p.PARAM_DOC}, ${p.ParamDecorator}, ` : ''}${other.NotFoundError} } from '../${other.feature}';\n` : ''}import { Public } from '../common/auth';
import { absoluteUrl, type ChangeConditions, ConditionalChange, ConditionalGet, Conditions, locationHeader, sendTagged } from '../common/http';
import { Idempotent } from '../common/idempotency';
import { offsetPage, OffsetPageQueryDto, PAGINATION_HEADERS } from '../common/paging';
import { FORBIDDEN, NOT_FOUND, UNAVAILABLE, VALIDATION } from '../common/problem';
import { ApiProblems, jsonBodyProblems, unexpectedBodyProblems } from '../common/swagger';
import { invalidBody, invalidQuery, notAUuid, UuidParam } from '../common/validation';
import { AppConfig } from '../config';
import { ${n.CONSTANT}_TAGS, ${n.Singular}Dto, ${n.singular$}Etag } from './dto/${n.singular}.dto';
import { ${n.Singular}InputDto } from './dto/${n.singular}-input.dto';
import { ${n.Singular}PageDto } from './dto/${n.singular}-page.dto';
import { Not${n.Singular}CreatorError, ${n.Singular}NotFoundError } from './${n.name}.errors';
import { ${n.Plural}Service } from './${n.name}.service';

const itemPath = (id: string): string => \`/${n.name}/\${id}\`;
${p ? `const listPath = (${p.param}: ${p.type}): string => \`${p.path}/\${${p.param}}/${n.name}\`;\n` : ''}const ID_PARAM = { name: 'id', format: 'uuid', description: "The ${n.one}'s id." } as const;
${other ? `const ${other.ONE}_NOT_FOUND = ${notFoundProblem(other.NotFoundError, other.one, other.exampleId)};\n` : ''}const ${n.CONSTANT}_NOT_FOUND = ${notFoundProblem(`${n.Singular}NotFoundError`, n.one, `'${EXAMPLE_ID}'`)};
const NOT_CREATOR = {
  types: [FORBIDDEN],
  description: 'The ${n.one} was created by another user.',
  examples: [() => new Not${n.Singular}CreatorError('${EXAMPLE_ID}')],
};
const INVALID_${n.CONSTANT} = invalidBody(${n.Singular}InputDto, ${invalidSample});

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
    ${p ? `${p.ONE}_NOT_FOUND,\n    ` : ''}UNAVAILABLE,
  )
  async list${n.Plural}(
    ${parentArgument}@Query() query: OffsetPageQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}PageDto> {
    const { items, total } = await this.${n.plural}.list${n.Plural}(${arg}query.limit, query.offset);
    const listUrl = absoluteUrl(reply.request, this.config.ownBaseUrl, ${p ? `listPath(${p.param})` : `'/${n.name}'`});
    const page = offsetPage(listUrl, query, total);
    reply.headers(page.headers);
    return { data: items.map((item) => ${n.Singular}Dto.from(item)), meta: page.meta };
  }

  @Post(${listRouteParam})
  @UserAuth()
  @Idempotent({ scope: 'caller' })
  ${operation(`create${n.Singular}`, parts.createSummary, parts.createDescription)}
${parentParam}  @ApiCreatedResponse({
    type: ${n.Singular}Dto,
    description: 'Created',
    headers: locationHeader('The URI of the new ${n.one}.', '/${n.name}/${EXAMPLE_ID}'),
  })
  @ApiProblems(
    ...jsonBodyProblems('Invalid input: ${p ? `${p.paramRule}, or ` : ''}${bodyRule}.', INVALID_${n.CONSTANT}),
    ${otherNotFound}UNAVAILABLE,
  )
  async create${n.Singular}(
    ${parentArgument}@CurrentUser() user: AuthenticatedUser,
    @Body() body: ${n.Singular}InputDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}Dto> {
    const created = ${n.Singular}Dto.from(await this.${n.plural}.create${n.Singular}(${arg}user.id, body));
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, itemPath(created.id)));
    return created;
  }

  @Get(${itemRoute})
  @Public()
  ${operation(`get${n.Singular}`, `Get ${n.aOne}`, 'With its ETag; send If-None-Match to get a 304 when it has not changed.')}
  @ApiParam(ID_PARAM)
  @ConditionalGet(${n.CONSTANT}_TAGS)
  @ApiOkResponse({ type: ${n.Singular}Dto, description: 'The ${n.one}' })
  @ApiProblems(
    { types: [VALIDATION], description: 'id is not a UUID.', examples: [() => notAUuid('id')] },
    ${n.CONSTANT}_NOT_FOUND,
    UNAVAILABLE,
  )
  async get${n.Singular}(@UuidParam('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const item = ${n.Singular}Dto.from(await this.${n.plural}.get${n.Singular}(id));
    await sendTagged(reply, ${n.singular$}Etag(item), item);
  }

  @Put(${itemRoute})
  @UserAuth()
  ${operation(`update${n.Singular}`, `Update ${n.aOne}`, 'Replaces its fields. Only its creator may.')}
  @ApiParam(ID_PARAM)
  @ConditionalChange(${n.CONSTANT}_TAGS)
  @ApiOkResponse({ type: ${n.Singular}Dto, description: 'Updated' })
  @ApiProblems(
    ...jsonBodyProblems('Invalid input: id is not a UUID, or ${bodyRule}.', INVALID_${n.CONSTANT}),
    NOT_CREATOR,
    ${n.ref ? `${n.ref.ONE}_NOT_FOUND,\n    ` : ''}${n.CONSTANT}_NOT_FOUND,
    UNAVAILABLE,
  )
  async update${n.Singular}(
    @UuidParam('id') id: string,
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: ${n.Singular}InputDto,
    @Conditions() conditions: ChangeConditions,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${n.Singular}Dto> {
    const item = ${n.Singular}Dto.from(await this.${n.plural}.update${n.Singular}(id, user.id, body, conditions));
    reply.header('ETag', ${n.singular$}Etag(item));
    return item;
  }

  @Delete(${itemRoute})
  @HttpCode(204)
  @UserAuth()
  ${operation(`delete${n.Singular}`, `Delete ${n.aOne}`, 'Only its creator may.')}
  @ApiParam(ID_PARAM)
  @ConditionalChange(${n.CONSTANT}_TAGS)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiProblems(
    ...unexpectedBodyProblems(() => notAUuid('id'), 'id is not a UUID.'),
    NOT_CREATOR,
    ${n.CONSTANT}_NOT_FOUND,
    UNAVAILABLE,
  )
  async delete${n.Singular}(
    @UuidParam('id') id: string,
    @CurrentUser() user: AuthenticatedUser,
    @Conditions() conditions: ChangeConditions,
  ): Promise<void> {
    await this.${n.plural}.delete${n.Singular}(id, user.id, conditions);
  }
}
`;
};

/** The feature's errors: its 404, its 403 (only the creator changes an item) and its 412. */
export const errorsFile = (n) => `import { type FailedCondition, preconditionFailedDetail } from '../common/http';
import { DomainError, ForbiddenError, NotFoundError, PRECONDITION_FAILED } from '../common/problem';

export class ${n.Singular}NotFoundError extends NotFoundError {
  constructor(id: string) {
    super(\`No ${n.one} with id \${id} exists.\`);
  }
}

export class Not${n.Singular}CreatorError extends ForbiddenError {
  constructor(id: string) {
    super(\`${cap(n.one)} \${id} was created by another user; only its creator may change it.\`);
  }
}

/** If-Match names none of the ${n.one}'s current ETags (or only weak ones), or If-None-Match names one (or is \`*\`). */
export class ${n.Singular}PreconditionFailedError extends DomainError {
  constructor(id: string, failed: FailedCondition) {
    super(PRECONDITION_FAILED, preconditionFailedDetail(\`${cap(n.one)} \${id}\`, failed));
  }
}
`;

/**
 * The service: the list, its page and count side by side (a nested feature's first answers the
 * parent's 404), get by id, the create, and the changes of its creator. `parts`: `listDoc`, the
 * list's doc comment; `create`, the create's doc comment and body. A change locks the item's row
 * (and, when it refers to another feature's item, holds that one through its lookup).
 */
export const serviceFile = (n, p, parts) => {
  const { param, arg, Of } = scopeOf(p);
  const f = fieldsOf(n);
  const lookup = p ?? n.ref;
  const change = n.ref
    ? `this.${n.ref.table}.${n.ref.withHeld}(values.${n.ref.param}, async (tx) =>`
    : 'this.unitOfWork.run(async (tx) =>';
  return `import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

${lookup ? `import { ${lookup.Lookup} } from '../${lookup.feature}';\n` : ''}import { Clock } from '../common/clock';
import { type ChangeConditions, failedChangeCondition } from '../common/http';
import { type Transaction, UnitOfWork } from '../database';
import { ${n.Singular}Dto, ${n.singular$}Etag } from './dto/${n.singular}.dto';
import type { ${n.Singular} } from './entities/${n.singular}.entity';
import { Not${n.Singular}CreatorError, ${n.Singular}NotFoundError, ${n.Singular}PreconditionFailedError } from './${n.name}.errors';
import { ${n.Plural}Repository } from './${n.name}.repository';

/** What a client sets, as the body has it: the create's and the update's. */
export type ${n.Singular}Values = Pick<${n.Singular}, ${f.picked}>;

export interface ${n.Singular}Page {
  items: ${n.Singular}[];
  total: number;
}

@Injectable()
export class ${n.Plural}Service {
  constructor(
    private readonly repository: ${n.Plural}Repository,
    private readonly unitOfWork: UnitOfWork,
${lookup ? `    private readonly ${lookup.table}: ${lookup.Lookup},\n` : ''}    private readonly clock: Clock,
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

${parts.create}
  /** Replaces its fields: only its creator may, and only while \`conditions\` hold. */
  update${n.Singular}(id: string, userId: number, values: ${n.Singular}Values, conditions: ChangeConditions = {}): Promise<${n.Singular}> {
    return ${change} {
      const item = await this.changeable(tx, id, userId, conditions);
      return this.repository.update(tx, { ...item, ...values });
    });
  }

  /** Only its creator may, and only while \`conditions\` hold. */
  async delete${n.Singular}(id: string, userId: number, conditions: ChangeConditions = {}): Promise<void> {
    await this.unitOfWork.run(async (tx) => {
      await this.changeable(tx, id, userId, conditions);
      await this.repository.remove(tx, id);
    });
  }

  /** The item, its row locked until \`tx\` ends, when \`userId\` may change it as \`conditions\` ask; else why not. */
  private async changeable(tx: Transaction, id: string, userId: number, conditions: ChangeConditions): Promise<${n.Singular}> {
    const item = await this.repository.findForUpdate(tx, id);
    if (!item) throw new ${n.Singular}NotFoundError(id);
    if (item.creatorId !== userId) throw new Not${n.Singular}CreatorError(id);
    const failed = failedChangeCondition(conditions, () => ${n.singular$}Etag(${n.Singular}Dto.from(item)));
    if (failed) throw new ${n.Singular}PreconditionFailedError(id, failed);
    return item;
  }
}
`;
};

/** The create of a top-level item, in a transaction (which holds the item it refers to, if any). */
export const topLevelCreate = (n) => {
  const row = `{ id: randomUUID(), ...values, creatorId, createdAt: this.clock.now() }`;
  return n.ref
    ? `  /** One INSERT, in a transaction that holds the ${n.ref.one} it refers to (its 404 when there is none). */
  create${n.Singular}(creatorId: number, values: ${n.Singular}Values): Promise<${n.Singular}> {
    return this.${n.ref.table}.${n.ref.withHeld}(values.${n.ref.param}, (tx) => this.repository.insert(tx, ${row}));
  }
`
    : `  /** One INSERT: the id is made here, and the time is the Clock's. */
  create${n.Singular}(creatorId: number, values: ${n.Singular}Values): Promise<${n.Singular}> {
    return this.unitOfWork.run((tx) => this.repository.insert(tx, ${row}));
  }
`;
};

/**
 * All SQL of the feature: a page of the list and its count, one by id, and in a transaction the
 * insert (a nested feature's, in the one that holds the parent), the row locked, its update and
 * its delete.
 */
export const repositoryFile = (n, p) => {
  const { param, Of } = scopeOf(p);
  return `import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { managerOf, type Transaction } from '../database';
import { ${n.Singular} } from './entities/${n.singular}.entity';

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

  /** SELECT ... FOR UPDATE: the row stays as read until \`tx\` ends. */
  findForUpdate(tx: Transaction, id: string): Promise<${n.Singular} | null> {
    return managerOf(tx).getRepository(${n.Singular}).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async insert(tx: Transaction, row: ${n.Singular}): Promise<${n.Singular}> {
    await managerOf(tx).getRepository(${n.Singular}).insert(row);
    return row;
  }

  /** Writes every column but those that never change: a column added to the entity is written with the rest. */
  async update(tx: Transaction, row: ${n.Singular}): Promise<${n.Singular}> {
    const { id, creatorId: _creatorId, createdAt: _createdAt, ...changeable } = row;
    await managerOf(tx).getRepository(${n.Singular}).update({ id }, changeable);
    return row;
  }

  async remove(tx: Transaction, id: string): Promise<void> {
    await managerOf(tx).getRepository(${n.Singular}).delete({ id });
  }
}
`;
};

/** `doc` is the entity's doc comment; a nested item's row holds its parent's id. */
export const entityFile = (n, p, doc) => {
  const c = p ?? n.ref;
  return `import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';

${doc}
@Entity('${n.table}')
${p ? `// Leads with ${p.column}: serves the foreign key and "the ${n.many} of this ${p.one}, in order".\n` : ''}@Index('${listIndex(n, p)}', [${p ? `'${p.param}', ` : ''}'createdAt', 'id'])
${n.ref ? `@Index('${n.table}_${c.column}_idx', ['${c.param}'])\n` : ''}@Index('${n.table}_creator_id_idx', ['creatorId'])
export class ${n.Singular} {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: '${n.table}_pkey' })
  id: string;

${
  c
    ? `  @Column({ name: '${c.column}', type: '${c.sqlType}' })
  @ForeignKey('${c.table}', 'id', { name: '${n.table}_${c.column}_fkey', onDelete: 'CASCADE' })
  ${c.param}: ${c.type};

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
};

/** The table of the entity: `doc` is the migration's doc comment, `listIndexComment` the list index's. */
export const migrationFile = (n, p, { doc, listIndexComment }) => {
  const c = p ?? n.ref;
  return `import { MigrationInterface, QueryRunner } from 'typeorm';

${doc}
export class ${n.Plural}${n.timestamp} implements MigrationInterface {
  name = '${n.Plural}${n.timestamp}';

  async up(q: QueryRunner): Promise<void> {
    await q.query(\`CREATE TABLE "${n.table}" (
      "id" uuid NOT NULL,
${c ? `      "${c.column}" ${c.sqlType} NOT NULL,\n` : ''}      "name" character varying(100) NOT NULL,
      "creator_id" integer NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      CONSTRAINT "${n.table}_pkey" PRIMARY KEY ("id"))\`);
    // ${listIndexComment}
    await q.query(\`CREATE INDEX "${listIndex(n, p)}" ON "${n.table}" (${p ? `"${p.column}", ` : ''}"created_at", "id")\`);
${n.ref ? `    // The foreign key's index: a delete of ${c.aOne} finds its ${n.many}.\n    await q.query(\`CREATE INDEX "${n.table}_${c.column}_idx" ON "${n.table}" ("${c.column}")\`);\n` : ''}    // The foreign key's index: a user's ${n.many}, and checks when a user row changes.
    await q.query(\`CREATE INDEX "${n.table}_creator_id_idx" ON "${n.table}" ("creator_id")\`);
${c ? `    await q.query(\`ALTER TABLE "${n.table}" ADD CONSTRAINT "${n.table}_${c.column}_fkey" FOREIGN KEY ("${c.column}") REFERENCES "${c.table}"("id") ON DELETE CASCADE ON UPDATE NO ACTION\`);\n` : ''}    await q.query(
      \`ALTER TABLE "${n.table}" ADD CONSTRAINT "${n.table}_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION\`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(\`DROP TABLE "${n.table}"\`);
  }
}
`;
};

/** The item as the API answers it (a nested item's, or one that refers to another, holds that one's id), its ETag and versions. */
export const dtoFile = (n, p) => {
  const c = p ?? n.ref;
  return `import { ApiSchema } from '@nestjs/swagger';

import { type EntityTags, strongEtag } from '../../common/http';
import { ApiDateTime, ApiInt64, ApiUuid } from '../../common/swagger';
import type { ${n.Singular} } from '../entities/${n.singular}.entity';
import { ${n.Singular}PreconditionFailedError } from '../${n.name}.errors';

@ApiSchema({ name: '${n.Singular}' })
export class ${n.Singular}Dto {
  /** @example ${EXAMPLE_ID} */
  @ApiUuid({ readOnly: true })
  id: string;

${
  c
    ? `  /**
   * The id of the ${c.one} it ${p ? 'belongs to' : 'refers to'}.
   * @example ${c.exampleId}
   */
  @ApiInt64(${p ? '{ readOnly: true }' : ''})
  ${c.param}: ${c.type};

`
    : ''
}  /** @example 'First ${n.one}' */
  name: string;

  /**
   * The id of the user who created it.
   * @example 1
   */
  @ApiInt64({ readOnly: true })
  creatorId: number;

  /** @example 2026-11-01T08:00:00.000Z */
  @ApiDateTime({ readOnly: true })
  createdAt: string;

  static from(item: ${n.Singular}): ${n.Singular}Dto {
    return { id: item.id, ${c ? `${c.param}: item.${c.param}, ` : ''}name: item.name, creatorId: item.creatorId, createdAt: item.createdAt.toISOString() };
  }
}

/** The strong ETag of ${n.aOne}: the hash of its JSON, so it changes whenever anything a client reads does. */
export const ${n.singular$}Etag = (item: ${n.Singular}Dto): string => strongEtag(JSON.stringify(item));

/** What the document says of ${n.aOne}'s versions (see @ConditionalGet, @ConditionalChange). */
export const ${n.CONSTANT}_TAGS: EntityTags = {
  resource: '${n.one}',
  etag: {
    description: 'Strong entity tag of this representation of the ${n.one}.',
    example: '"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"',
  },
  preconditionFailed: {
    description:
      'Precondition failed: the ${n.one} has changed since the version named in If-Match (GET it again), or If-None-Match is \`*\` or names its current ETag. Nothing was changed.',
    examples: [() => new ${n.Singular}PreconditionFailedError('${EXAMPLE_ID}', 'If-Match')],
  },
};
`;
};

/** The body of the create and of the update (one that refers to another feature's item names it). */
export const inputDtoFile = (n, p) => `import { ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ${n.ref ? 'IsInt, IsString, Length, Min' : 'IsString, Length'} } from 'class-validator';

${n.ref ? "import { ApiInt64 } from '../../common/swagger';\n" : ''}import { IsPlainText, trim } from '../../common/validation';

/** The body of POST ${listRoute(n, p)} and PUT /${n.name}/{id}. */
@ApiSchema({ name: '${n.Singular}Input' })
export class ${n.Singular}InputDto {
  /** @example 'First ${n.one}' */
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @IsPlainText({ description: 'Trimmed.' })
  name: string;
${
  n.ref
    ? `
  /**
   * The id of the ${n.ref.one} it refers to.
   * @example ${n.ref.exampleId}
   */
  @ApiInt64()
  @IsInt()
  @Min(1)
  ${n.ref.param}: ${n.ref.type};
`
    : ''
}}
`;

/** A page of the list. */
export const pageDtoFile = (n) => `import { ApiSchema } from '@nestjs/swagger';

import { PageMetaDto } from '../../common/paging';
import { ${n.Singular}Dto } from './${n.singular}.dto';

@ApiSchema({ name: 'Paginated${n.Plural}' })
export class ${n.Singular}PageDto {
  data: ${n.Singular}Dto[];

  meta: PageMetaDto;
}
`;

// ---------------------------------------------------------------------------------------
// Tests

/**
 * The service's unit test, on a mocked repository (and the lookup of the feature a nested or
 * referring one uses, which runs the work it holds in TX), a unit of work that runs it in TX,
 * and a Clock that says NOW; `tests`, the shape's own cases, before the changes' shared ones.
 */
export const unitTestFile = (n, p, tests) => {
  const lookup = p ?? n.ref;
  const fields = n.ref ? `${n.ref.param}: ${n.ref.exampleId}, ` : p ? `${p.param}: ${p.exampleId}, ` : '';
  const args = fieldsOf(n).values("'Renamed'");
  return `${lookup ? `import { ${lookup.Lookup} } from '../../src/${lookup.feature}';\n` : ''}import type { Clock } from '../../src/common/clock/clock';
${p ? `import { NotFoundError } from '../../src/common/problem';\n` : ''}import type { Transaction, UnitOfWork } from '../../src/database';
import { ${n.singular$}Etag, ${n.Singular}Dto } from '../../src/${n.name}/dto/${n.singular}.dto';
import { ${n.Plural}Repository } from '../../src/${n.name}/${n.name}.repository';
import { ${n.Plural}Service } from '../../src/${n.name}/${n.name}.service';
import { automock } from '../support/service-mocks';

const NOW = new Date('2026-11-22T10:15:00.000Z');
const ID = '${EXAMPLE_ID}';
${p ? `const ${p.ONE}_ID = ${p.exampleId};\n` : ''}/** The transaction of the work: a repository call given it ran inside. */
const TX = { name: 'the transaction' } as unknown as Transaction;
const ITEM = { id: ID, ${fields}name: 'First', creatorId: 7, createdAt: NOW };

function new${n.Plural}ServiceTest() {
  const repository = automock(${n.Plural}Repository);
  const unitOfWork = { run: (work: (tx: Transaction) => unknown) => work(TX) } as unknown as UnitOfWork;
${lookup ? `  const ${lookup.table} = automock(${lookup.Lookup});\n  ${lookup.table}.${lookup.withHeld}.mockImplementation((_id, work) => work(TX));\n` : ''}  const clock = { now: () => new Date(NOW) } satisfies Clock;
  return { sut: new ${n.Plural}Service(repository, unitOfWork, ${lookup ? `${lookup.table}, ` : ''}clock), repository${lookup ? `, ${lookup.table}` : ''} };
}

describe(${n.Plural}Service.name, () => {
  let sut: ${n.Plural}Service;
  let repository: jest.Mocked<${n.Plural}Repository>;
${lookup ? `  let ${lookup.table}: jest.Mocked<${lookup.Lookup}>;\n` : ''}
  beforeEach(() => {
    ({ sut, repository${lookup ? `, ${lookup.table}` : ''} } = new${n.Plural}ServiceTest());
  });

${tests}
  it('answers an unknown id with the not-found error', async () => {
    repository.findById.mockResolvedValue(null);

    await expect(sut.get${n.Singular}(ID)).rejects.toMatchObject({ status: 404, slug: 'not-found' });
  });

  it('lets its creator change it, under its lock, while If-Match holds', async () => {
    repository.findForUpdate.mockResolvedValue(ITEM);
    repository.update.mockImplementation(async (_tx, row) => row);
    const etag = ${n.singular$}Etag(${n.Singular}Dto.from(ITEM));

    await expect(sut.update${n.Singular}(ID, 7, ${args}, { ifMatch: etag })).resolves.toMatchObject({ name: 'Renamed' });
    expect(repository.findForUpdate).toHaveBeenCalledWith(TX, ID);
    await expect(sut.update${n.Singular}(ID, 7, ${args}, { ifMatch: '"stale"' })).rejects.toMatchObject({ status: 412 });
    await expect(sut.delete${n.Singular}(ID, 7, { ifMatch: '"stale"' })).rejects.toMatchObject({ status: 412 });
    expect(repository.remove).not.toHaveBeenCalled();
    await sut.delete${n.Singular}(ID, 7);
    expect(repository.remove).toHaveBeenCalledWith(TX, ID);
  });

  it('refuses a change by another user (403) or of an unknown id (404)', async () => {
    repository.findForUpdate.mockResolvedValueOnce(ITEM);
    await expect(sut.delete${n.Singular}(ID, 8)).rejects.toMatchObject({ status: 403, slug: 'forbidden' });
    repository.findForUpdate.mockResolvedValueOnce(null);
    await expect(sut.update${n.Singular}(ID, 7, ${args})).rejects.toMatchObject({ status: 404, slug: 'not-found' });
    expect(repository.update).not.toHaveBeenCalled();
    expect(repository.remove).not.toHaveBeenCalled();
  });
});
`;
};
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

/**
 * The e2e cases of GET, PUT and DELETE /<name>/{id}: `make` is an expression that creates one of
 * Alice's and gives its JSON; the test file has `alice` and `bob`.
 */
export const itemTests = (n, make) => {
  const body = fieldsOf(n).sample("'Renamed'", 'made.' + (n.ref?.param ?? ''));
  return `const item = (id: string) => \`/${n.name}/\${id}\`;
const change = (method: 'PUT' | 'DELETE', id: string, user?: UserFixture, headers: Record<string, string> = {}, payload?: object) =>
  t.request({ method, url: item(id), headers: { ...headers, ...(user ? { authorization: user.bearer } : {}) }, payload });

describe('/${n.name}/{id}', () => {
  it('answers GET with its ETag, and 304 to If-None-Match; an unknown id with 404, one that is not a UUID with 400', async () => {
    const made = ${make};
    const res = await t.request({ method: 'GET', url: item(made.id) });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: made });
    const again = await t.request({ method: 'GET', url: item(made.id), headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expectProblem(await t.request({ method: 'GET', url: item(randomUUID()) }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: item('42') }), 400, 'validation');
  });

  it('lets its creator replace it (with a new ETag) while If-Match holds, and no one else', async () => {
    const made = ${make};
    const etag = String((await t.request({ method: 'GET', url: item(made.id) })).headers.etag);
    const body = ${body};
    expectProblem(await change('PUT', made.id, bob, {}, body), 403, 'forbidden');
    expectProblem(await change('PUT', made.id, undefined, {}, body), 401);
    expectProblem(await change('PUT', made.id, alice, {}, { name: '' }), 400, 'validation');
    const res = await change('PUT', made.id, alice, { 'if-match': etag }, body);
    expect({ status: res.statusCode, name: res.json().name }).toEqual({ status: 200, name: 'Renamed' });
    expect(res.headers.etag).not.toBe(etag);
    expectProblem(await change('PUT', made.id, alice, { 'if-match': etag }, body), 412, 'precondition-failed');
    expectProblem(await change('PUT', randomUUID(), alice, {}, body), 404, 'not-found');
  });

  it('lets its creator delete it (204), and no one else', async () => {
    const made = ${make};
    expectProblem(await change('DELETE', made.id, bob), 403, 'forbidden');
    expectProblem(await change('DELETE', made.id, alice, { 'if-match': '"stale"' }), 412, 'precondition-failed');
    expect((await change('DELETE', made.id, alice)).statusCode).toBe(204);
    expectProblem(await change('DELETE', made.id, alice), 404, 'not-found');
  });
});
`;
};

/**
 * The feature's create for test/e2e/locations.e2e-spec.ts; a nested one's, under a parent of its
 * own, and one that refers to another feature's item, to one of its own.
 */
export const createsFile = (n, p) => {
  const other = p ?? n.ref;
  const url = p ? `\`${p.path}/\${other.id}/${n.name}\`` : `'/${n.name}'`;
  const body = n.ref ? `{ name: 'First ${n.one}', ${n.ref.param}: other.id }` : `{ name: 'First ${n.one}' }`;
  return `import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the ${n.many} feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
${other ? `  // With ${other.aOne} of its own; the Location is the ${n.one}'s own URI.\n` : ''}  create${n.Singular}: async (ctx, extra) => {
${other ? `    const other = (await post(ctx, '${other.path}', ${other.body}, { authorization: ctx.user.bearer }, {})).json();\n` : ''}    const res = await post(ctx, ${url}, ${body}, { authorization: ctx.user.bearer }, extra);
    return { status: res.statusCode, location: res.headers.location, path: \`/${n.name}/\${res.json().id}\` };
  },
};
`;
};

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

/**
 * The client's checks of the item it `read` back after Ada `created` it, and of GET, PUT and
 * DELETE /<name>/{id}'s answers; `body` is a valid body of the PUT.
 */
export const clientItemChecks = (
  n,
  body,
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
  const item = { params: { path: { id: created.id } } };
  const updated = await expectData(ada.api.PUT('/${n.name}/{id}', { ...item, body: ${body} }), 200, 'update ${n.aOne}');
  check(updated.name === 'Renamed', 'the ${n.one} as updated');
  await expectProblem(bob.api.PUT('/${n.name}/{id}', { ...item, body: ${body} }), 403, 'forbidden', "update another's ${n.one}");
  await expectProblem(anyone.PUT('/${n.name}/{id}', { ...item, body: ${body} }), 401, 'unauthenticated', 'update without credentials');
  await expectProblem(
    ada.api.PUT('/${n.name}/{id}', { params: { path: { id: randomUUID() } }, body: ${body} }),
    404,
    'not-found',
    'update an unknown ${n.one}',
  );
  await expectProblem(bob.api.DELETE('/${n.name}/{id}', item), 403, 'forbidden', "delete another's ${n.one}");
  await expectProblem(anyone.DELETE('/${n.name}/{id}', item), 401, 'unauthenticated', 'delete without credentials');
  await expectNoContent(ada.api.DELETE('/${n.name}/{id}', item), 204, 'delete ${n.aOne}');
  await expectProblem(ada.api.DELETE('/${n.name}/{id}', item), 404, 'not-found', 'delete a deleted ${n.one}');
`;

/** The entries of GET, PUT and DELETE /<name>/{id} in the lists that must hold every route, by file. */
export const itemRoutes = (n) => {
  const body = fieldsOf(n).sample("'Renamed'", n.ref ? '1' : undefined);
  return {
    'test/e2e/route-policies.e2e-spec.ts': `  'GET /${n.name}/:id': 'public',
  'PUT /${n.name}/:id': 'user',
  'DELETE /${n.name}/:id': 'user',`,
    'test/e2e/hostile-input.e2e-spec.ts': `  'GET /${n.name}/:id': {},
  'PUT /${n.name}/:id': { validBody: () => fc.constant(${fieldsOf(n).sample("'Renamed'", n.ref?.hostileId)}) },
  'DELETE /${n.name}/:id': {},`,
    'bench/soak.mjs': `  [1, 'GET /${n.name}/{id}', () => call('GET /${n.name}/{id} (unknown)', [404], \`/${n.name}/\${randomUUID()}\`)],
  [1, 'PUT /${n.name}/{id}', () => call('PUT /${n.name}/{id} (unknown)', [404], \`/${n.name}/\${randomUUID()}\`, { method: 'PUT', ...json(${body}), auth: asUser(pick(users)) })],
  [1, 'DELETE /${n.name}/{id}', () => call('DELETE /${n.name}/{id} (unknown)', [404], \`/${n.name}/\${randomUUID()}\`, { method: 'DELETE', auth: asUser(pick(users)) })],`,
  };
};

import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, getSchemaPath, OpenAPIObject, type OperationObject, SwaggerModule } from '@nestjs/swagger';

import type { AppConfig } from '../../config/app-config';
import { API_KEY_PREFIXES } from '../auth/api-key-format';
import { API_KEY_SECURITY_SCHEME, BASIC_SECURITY_SCHEME, BEARER_SECURITY_SCHEME } from '../auth/security-schemes';
import { malformedHostError } from '../http/http-hooks';
import { METHOD_NOT_ALLOWED, problemTypeUri, VALIDATION } from '../problem/problem-types';
import { documentProblemTypes, PROBLEM_MEDIA_TYPE, problemExample } from './api-problems.decorator';
import { ProblemDto } from './problem.dto';

const TITLE = 'Region keys and Galaxy API';

const DESCRIPTION = `
Region API keys, users and tokens, and the planets and satellites of the Galaxy.

## Getting started

1. **Get a region key.** Regions are created by operators, not over the API: a region's first
   key comes from its operator (the CLI's \`region create\`, or \`INITIAL_REGION_API_KEY\` at
   the first start; outside production, a first start on an empty database prints one once).
   That key creates the region's other keys.
2. **Send it** in the \`X-API-Key\` header. Here, paste it under **Authorize**
   (\`apiKeyHeader\`), then "Try it out".
3. **Make a first call:** \`GET /auth/regions/me\` answers your region and its keys.
4. **As a user:** sign up with \`POST /user/signup\`, get a token from \`POST /auth/token\`,
   and call \`GET /me\` with \`Authorization: Bearer <token>\` (under Authorize,
   \`bearerAuth\`). Anyone may read planets; creating and changing them takes a user.

The rest (permissions, rotating keys, paging, ETags, the sandbox) is in \`docs/api.md\` in the
service's repository.

## Conventions

Errors are RFC 9457 problem documents (\`application/problem+json\`). Their \`type\` is
\`/problems/<slug>\` (absolute when the deployment has a public base URL), a page that says what
the problem means and what to do; \`x-problem-types\` lists every type with its title and status,
and each operation's examples are the documents it answers with. A known path asked with a
method it does not have answers 405 with \`Allow\` (\`#/components/responses/MethodNotAllowed\`).
Every response carries \`X-Request-ID\`; send your own to correlate logs.

Limits: a JSON body is at most 64 KiB (413) and nests at most 32 levels (400); a request must
arrive whole, headers and body, within a minute by default (408). When the database cannot
answer, or a row stays locked past the lock timeout, the answer is 503 with \`Retry-After\`:
retry then.

Environments: the live API takes region keys that start with \`rk_\`; the sandbox, at its own
address with its own data, takes \`rk_test_\` keys. Each refuses the other's keys with a 401
whose detail says which environment the key is for. Every sandbox response carries
\`X-API-Environment: sandbox\`.
`.trim();

const SANDBOX_NOTICE = `
> **Sandbox.** This is the sandbox, for testing an integration: its data are samples and
> test data, emptied and seeded again from time to time. It takes only sandbox keys
> (\`rk_test_…\`) and refuses live ones; its answers carry \`X-API-Environment: sandbox\`.
`.trim();

/**
 * The groups of /docs, in the order a newcomer meets them: Swagger UI shows the declared tags
 * in this order (no \`tagsSorter\`). The names are the controllers' @ApiTags, unchanged:
 * generated clients name their parts after them.
 */
const TAGS: readonly { name: string; description: string }[] = [
  {
    name: 'Region API keys',
    description:
      "Your region, its API keys and its audit trail. Every route takes a region API key in `X-API-Key` (the region's " +
      'first key comes from its operator) holding the permission the route names, `region:read` or `keys:write`.',
  },
  {
    name: 'Authentication',
    description:
      'Users and tokens: sign up, get a token, read your account. Sign-up and the token are public; `GET /me` takes ' +
      'your email and password (Basic) or a token (Bearer), never a region API key.',
  },
  {
    name: 'Planets',
    description:
      "The Galaxy's planets, with their satellites and images. Anyone may read them; creating one takes a user " +
      '(Basic or Bearer), and only its creator may change or delete it.',
  },
  {
    name: 'Celestial Bodies',
    description:
      'Create a planet or a satellite with one route, as Galaxy clients do: `type` says which. Takes a user (Basic ' +
      'or Bearer).',
  },
  {
    name: 'Problems',
    description:
      "The pages a problem document's `type` resolves to: what each problem means and what to do about it. Public.",
  },
  {
    name: 'Health',
    description: 'Liveness and readiness probes, for load balancers and orchestrators. Public.',
  },
];

/** What the document says about where it is served: the environment and the public base URLs. */
export type OpenApiSettings = Pick<
  AppConfig,
  'API_ENVIRONMENT' | 'PUBLIC_BASE_URL' | 'SANDBOX_BASE_URL' | 'ownBaseUrl'
>;

const LIVE: OpenApiSettings = { API_ENVIRONMENT: 'live', ownBaseUrl: undefined };

/**
 * This environment's server first, as Swagger UI's "Try it out" calls the first one: its
 * public base URL when known, else "/" (whichever host served the page); then the other
 * environment's, when its base URL is set.
 */
function serversOf({
  API_ENVIRONMENT: environment,
  PUBLIC_BASE_URL,
  SANDBOX_BASE_URL,
}: OpenApiSettings): { url: string; description?: string }[] {
  const urls = { live: PUBLIC_BASE_URL, sandbox: SANDBOX_BASE_URL };
  const described = { live: 'Live', sandbox: 'Sandbox (test data, rk_test_ keys)' };
  const other = environment === 'live' ? 'sandbox' : 'live';
  const own = urls[environment];
  if (own === undefined && urls[other] === undefined && environment === 'live') return [{ url: '/' }];
  const servers = [{ url: own ?? '/', description: described[environment] }];
  if (urls[other] !== undefined) servers.push({ url: urls[other], description: described[other] });
  return servers;
}

export function buildOpenApiDocument(app: INestApplication, settings: OpenApiSettings = LIVE): OpenAPIObject {
  const sandbox = settings.API_ENVIRONMENT === 'sandbox';
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle(titleOf(settings))
    .setDescription(sandbox ? `${SANDBOX_NOTICE}\n\n${DESCRIPTION}` : DESCRIPTION)
    .setVersion('0.7.1');
  for (const server of serversOf(settings)) builder.addServer(server.url, server.description);
  for (const tag of TAGS) builder.addTag(tag.name, tag.description);
  const config = builder
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: sandbox
          ? `A sandbox region API key (${API_KEY_PREFIXES.sandbox}…).`
          : `A region API key (${API_KEY_PREFIXES.live}…).`,
      },
      API_KEY_SECURITY_SCHEME,
    )
    .addBasicAuth(
      { type: 'http', scheme: 'basic', description: 'Your email and password (users and tokens).' },
      BASIC_SECURITY_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token from POST /auth/token.' },
      BEARER_SECURITY_SCHEME,
    )
    .build();
  config.info.license = { name: 'Proprietary' };
  // An operation is named after its handler, unless it names itself.
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
  markPublicOperations(document);
  unwrapOperationDescriptions(document);
  documentMethodNotAllowed(document, settings.ownBaseUrl);
  documentEdgeRefusals(document);
  documentRequestIds(document);
  documentProblemTypes(document, settings.ownBaseUrl);
  return document;
}

const REQUEST_ID_HEADER = 'X-Request-ID';

/**
 * Every answer carries X-Request-ID (see standard-headers.ts): declared once, as a component,
 * and referred to by every response, the 405 below included.
 */
function documentRequestIds(document: OpenAPIObject): void {
  document.components = {
    ...document.components,
    headers: {
      ...document.components?.headers,
      [REQUEST_ID_HEADER]: {
        description:
          "The id of this request in the service's logs: the X-Request-ID you sent, when it is 1 to 128 letters, " +
          'digits and `._:-`, else a new UUID.',
        schema: { type: 'string', maxLength: 128, example: '3f8e0b7c-2a44-4c43-9d7e-8c1f5d0e6a21' },
      },
    },
  };
  const ref = { $ref: `#/components/headers/${REQUEST_ID_HEADER}` };
  const responses = [
    ...operationsOf(document).flatMap((operation) => Object.values(operation.responses ?? {})),
    ...Object.values(document.components.responses ?? {}),
  ] as { headers?: Record<string, unknown> }[];
  for (const response of responses) response.headers = { ...response.headers, [REQUEST_ID_HEADER]: ref };
}

/**
 * The 405 a known path answers to a method it does not have. No operation can declare it (it
 * is the answer where there is none), so it is a component of its own, which the description
 * names.
 */
function documentMethodNotAllowed(document: OpenAPIObject, baseUrl: string | undefined): void {
  const example = problemExample(METHOD_NOT_ALLOWED);
  document.components = {
    ...document.components,
    responses: {
      ...document.components?.responses,
      MethodNotAllowed: {
        description: 'The path exists, but not with this method; Allow lists those it has.',
        headers: {
          Allow: {
            description: 'The methods the path has (HEAD wherever GET is).',
            schema: { type: 'string', example: 'GET, HEAD, PUT, DELETE' },
          },
        },
        content: {
          [PROBLEM_MEDIA_TYPE]: {
            schema: { $ref: getSchemaPath(ProblemDto) },
            examples: {
              [METHOD_NOT_ALLOWED.slug]: {
                ...example,
                value: { ...example.value, type: problemTypeUri(METHOD_NOT_ALLOWED.slug, baseUrl) },
              },
            },
          },
        },
      },
    },
  };
}

/**
 * Every request meets the edge's header checks (http-hooks.ts): a malformed Host, or a second
 * Host or Authorization line, is a 400 whatever the operation. One that declares no 400 of
 * its own gets this one, so that a client generated from the document expects it.
 */
function documentEdgeRefusals(document: OpenAPIObject): void {
  const example = problemExample(VALIDATION, malformedHostError());
  for (const { responses } of operationsOf(document)) {
    if (!responses || responses['400']) continue;
    responses['400'] = {
      description: 'A malformed Host header, or more than one Host or Authorization header.',
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: { $ref: getSchemaPath(ProblemDto) },
          examples: { [VALIDATION.slug]: example },
        },
      },
    };
  }
}

/**
 * Operations that declare no security scheme are the @Public() ones (the auth-policy
 * guard refuses any route without a policy, and every other policy's decorator adds its
 * scheme). OpenAPI says "public" with an explicit empty list.
 */
function markPublicOperations(document: OpenAPIObject): void {
  for (const operation of operationsOf(document)) operation.security ??= [];
}

/**
 * An operation's description is its handler's JSDoc @remarks, wrapped to the source's line
 * width: a line break inside a paragraph is a space (Markdown reads it so too).
 */
function unwrapOperationDescriptions(document: OpenAPIObject): void {
  for (const operation of operationsOf(document)) {
    if (operation.description) operation.description = operation.description.replace(/(?<!\n)\n(?!\n)/g, ' ');
  }
}

/** Every operation of the document, path by path, in the order of the methods the API has. */
const operationsOf = (document: OpenAPIObject): OperationObject[] =>
  Object.values(document.paths).flatMap((pathItem) =>
    (['get', 'put', 'post', 'delete', 'patch'] as const).flatMap((method) => pathItem[method] ?? []),
  );

const titleOf = (settings: OpenApiSettings): string =>
  settings.API_ENVIRONMENT === 'sandbox' ? `${TITLE} (sandbox)` : TITLE;

/** Swagger UI at /docs, the document at /docs-json and /docs-yaml. */
export function setupOpenApi(app: NestFastifyApplication, settings: OpenApiSettings = LIVE): OpenAPIObject {
  const document = buildOpenApiDocument(app, settings);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: titleOf(settings),
    swaggerOptions: {
      // The first server is this environment's ("/" when its base URL is not set), so "Try it
      // out" calls the environment that served the page.
      persistAuthorization: true,
      displayRequestDuration: true,
    },
  });
  return document;
}

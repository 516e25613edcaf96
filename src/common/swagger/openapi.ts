import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_KEY_SECURITY_SCHEME, BASIC_SECURITY_SCHEME, BEARER_SECURITY_SCHEME } from '../auth/security-schemes';

const TITLE = 'Region keys and Galaxy API';

const DESCRIPTION = `
Region API keys, users and tokens, and the planets and satellites of the Galaxy.

Errors are RFC 9457 problem documents (\`application/problem+json\`). Every response carries
\`X-Request-ID\`; send your own to correlate logs.

Limits: a JSON body is at most 64 KiB (413) and nests at most 32 levels (400); a request must
arrive whole, headers and body, within a minute by default (408). When the database, or the
shared rate-limit counters, cannot answer, or a row stays locked past the lock timeout, the
answer is 503 with \`Retry-After\`: retry then.
`.trim();

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle(TITLE)
    .setDescription(DESCRIPTION)
    .setVersion('0.7.1')
    // Relative, so "Try it out" calls whichever host and port served the page.
    .addServer('/')
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A region API key (rk_…).' },
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
  const document = SwaggerModule.createDocument(app, config);
  markPublicOperations(document);
  return document;
}

/**
 * Operations that declare no security scheme are the @Public() ones (the auth-policy
 * guard refuses any route without a policy, and every other policy's decorator adds its
 * scheme). OpenAPI says "public" with an explicit empty list.
 */
function markPublicOperations(document: OpenAPIObject): void {
  for (const pathItem of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = pathItem[method];
      if (operation && !operation.security) operation.security = [];
    }
  }
}

/** Swagger UI at /docs, the document at /docs-json and /docs-yaml. */
export function setupOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: TITLE,
    swaggerOptions: {
      // The document's only server is "/", so "Try it out" calls whichever host served the page.
      persistAuthorization: true,
      displayRequestDuration: true,
    },
  });
  return document;
}

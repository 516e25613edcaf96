import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = (title: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${title}</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-init.js"></script>
</body>
</html>`;

// The document URL is relative to the page, and the document's server is "/": the page
// works, and "Try it out" calls the same host, behind any host name, port or proxy.
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/docs-json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  displayRequestDuration: true,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout'
});`;

/**
 * Serves Swagger UI at /docs from the swagger-ui-dist package, read once at start.
 * (@nestjs/swagger would serve it through @fastify/static, whose current release needs
 * an ES-module-only dependency that Jest cannot load on Node 20.)
 */
export function serveDocsUi(fastify: FastifyInstance, title: string): void {
  const distDir = getAbsoluteFSPath();
  const html = PAGE(title);
  fastify.get('/docs', (_req, reply) => reply.type('text/html; charset=utf-8').send(html));
  fastify.get('/docs/swagger-ui-init.js', (_req, reply) =>
    reply.type('application/javascript; charset=utf-8').send(INIT_SCRIPT),
  );
  for (const [file, type] of Object.entries(ASSETS)) {
    const body = readFileSync(join(distDir, file));
    fastify.get(`/docs/${file}`, (_req, reply) =>
      reply.type(type).header('Cache-Control', 'public, max-age=86400').send(body),
    );
  }
}

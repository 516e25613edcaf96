import { readFileSync } from 'node:fs';

/**
 * The soak (bench/soak.mjs) sends traffic to every route, each from its entry in OPERATIONS,
 * and refuses to start when the server has a route without one; it runs for minutes on a
 * PostgreSQL server, so this reads the list here, against the committed openapi.json (which
 * other suites hold to the served document), for the mismatch to show with the other tests.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** The route each entry of OPERATIONS names: `[weight, 'METHOD /path', …]`. */
function soakRoutes(source: string): string[] {
  const start = source.indexOf('const OPERATIONS = [');
  const end = source.indexOf('\n];', start);
  if (start < 0 || end < 0) throw new Error('bench/soak.mjs: no list `const OPERATIONS = [ … ];`');
  return [...source.slice(start, end).matchAll(/\[\s*[\d.]+\s*,\s*'([A-Z]+ \/[^']*)'/g)].map((m) => m[1]);
}

it('bench/soak.mjs has traffic for every operation of openapi.json, and for no other', () => {
  const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as { paths: Record<string, object> };
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
  const soak = new Set(soakRoutes(readFileSync('bench/soak.mjs', 'utf8')));
  expect({
    withoutTraffic: operations.filter((operation) => !soak.has(operation)),
    unknownToTheDocument: [...soak].filter((route) => !operations.includes(route)),
  }).toEqual({ withoutTraffic: [], unknownToTheDocument: [] });
});

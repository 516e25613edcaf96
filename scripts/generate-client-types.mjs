// Generates the TypeScript types of a client of this API from its OpenAPI document, for
// openapi-fetch: node scripts/generate-client-types.mjs <openapi.json | a .yaml file | URL of /docs-json> <out.d.ts>
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import ts from 'typescript';

const [source, out] = process.argv.slice(2);
if (!source || !out) {
  console.error('usage: node scripts/generate-client-types.mjs <openapi.json | URL> <out.d.ts>');
  process.exit(2);
}

const BLOB = ts.factory.createTypeReferenceNode('Blob');
const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull());

// openapi-typescript reads a URL itself, YAML included (the Galaxy's own document is YAML).
const document = /^https?:\/\//.test(source)
  ? new URL(source)
  : /\.ya?ml$/.test(source)
    ? pathToFileURL(resolve(source))
    : JSON.parse(readFileSync(source, 'utf8'));
const ast = await openapiTS(document, {
  silent: true,
  // A default is what the server assumes when a request leaves the field out, so the field
  // stays optional to send (revokeOldAfterSeconds); the generator would make it required.
  defaultNonNullable: false,
  // A file is sent as a Blob (a File is one) in a FormData body, and read back as one
  // with parseAs: 'blob'; a string would type-check and send the wrong thing.
  transform(schema) {
    if (schema.format !== 'binary') return undefined;
    const nullable = Array.isArray(schema.type) && schema.type.includes('null');
    return nullable ? ts.factory.createUnionTypeNode([BLOB, NULL]) : BLOB;
  },
});
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, COMMENT_HEADER + astToString(ast));

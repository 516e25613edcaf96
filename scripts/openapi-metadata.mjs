// Writes what the @nestjs/swagger CLI plugin reads from the DTOs (their types, JSDoc and
// validators) as a module, for code that is not compiled by `nest build`: the tests, which
// ts-jest compiles file by file with no type checker for the plugin to use. Same plugin and
// options as the build (nest-cli.json). Usage: node scripts/openapi-metadata.mjs [out.ts]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';

const out = resolve(process.argv[2] ?? 'test/generated/openapi-metadata.ts');
const nestCli = JSON.parse(readFileSync('nest-cli.json', 'utf8'));
const plugin = nestCli.compilerOptions.plugins.find((p) => p.name === '@nestjs/swagger');
if (!plugin) throw new Error('nest-cli.json: no @nestjs/swagger plugin in compilerOptions.plugins');

mkdirSync(dirname(out), { recursive: true });
new PluginMetadataGenerator().generate({
  visitors: [new ReadonlyVisitor({ ...plugin.options, pathToSource: dirname(out) })],
  outputDir: dirname(out),
  filename: basename(out),
  // A plain program: the build type-checks the same files.
  tsProgramRef: ReadonlyVisitor.createTsProgram(nestCli.compilerOptions.tsConfigPath),
  printDiagnostics: false,
});

// Under nodenext the generator names each module by its compiled file (`x.dto.js`); jest
// resolves the source's name.
writeFileSync(out, readFileSync(out, 'utf8').replace(/import\("(\.[^"]*)\.js"\)/g, 'import("$1")'));

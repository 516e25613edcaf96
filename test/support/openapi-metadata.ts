import { resolve } from 'node:path';

import { jest } from '@jest/globals';
import { SwaggerModule } from '@nestjs/swagger';

/**
 * `nest build` runs the @nestjs/swagger CLI plugin, which gives each DTO the schema its types,
 * JSDoc and validators say; ts-jest compiles one file at a time, without the type checker the
 * plugin needs. The global setup writes the plugin's findings to this module
 * (scripts/openapi-metadata.mjs), and an app started in a test loads them first, so that it
 * serves the document the compiled server serves.
 */
const METADATA = resolve(__dirname, '../generated/openapi-metadata.ts');

export async function loadOpenApiMetadata(): Promise<void> {
  const { default: metadata } = jest.requireActual<{ default: () => Promise<Record<string, unknown>> }>(METADATA);
  await SwaggerModule.loadPluginMetadata(metadata);
}

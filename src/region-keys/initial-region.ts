import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

import { AppConfig } from '../config';
import { RegionKeysService } from './region-keys.service';
import { RegionKeysSettings } from './region-keys.settings';

/**
 * Makes sure a fresh installation can be used: with no region in the database, creates
 * one with INITIAL_REGION_API_KEY, or (outside production) with a generated key that is
 * printed once to stdout.
 *
 * Only in the server: the operator CLI imports the same module in an application context,
 * which has no HTTP server, and there `region create` on an empty database must make only the
 * region it names. Told by the HTTP adapter rather than by a module that only the server
 * imports: such a module would reach what this work uses (here the service and settings, for
 * the sample data the planets' repository) through the feature's front door, offering it to
 * every feature. Here the work stays in its feature, which is one static module, the same
 * wherever it is imported.
 */
@Injectable()
export class InitialRegion implements OnApplicationBootstrap {
  private readonly logger = new Logger(InitialRegion.name);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly regionKeys: RegionKeysService,
    private readonly config: AppConfig,
    private readonly settings: RegionKeysSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.adapterHost.httpAdapter) return;
    if (await this.regionKeys.hasAnyRegion()) return;
    const name = this.settings.initialRegionName;
    const presetKey = this.settings.INITIAL_REGION_API_KEY;
    if (presetKey) {
      const created = await this.regionKeys.createFirstRegion(name, 'Initial key (INITIAL_REGION_API_KEY)', presetKey);
      if (!created) return;
      const { region } = created;
      this.logger.log(`Created region "${region.name}" (${region.id}) with the key from INITIAL_REGION_API_KEY`);
      return;
    }
    if (this.config.isProduction) {
      this.logger.warn(
        'No region exists yet. Create one with: npm run --silent cli -- region create --name "<name>" ' +
          '(or set INITIAL_REGION_API_KEY before the first start).',
      );
      return;
    }
    const created = await this.regionKeys.createFirstRegion(name, 'Generated at first start');
    // Another instance starting at the same moment made it (and printed its key).
    if (!created) return;
    const { region, key } = created;
    // Straight to stdout, not through the logger: log pipelines keep what they receive,
    // and this key is shown exactly once.
    process.stdout.write(
      [
        '',
        '================================================================================',
        '  FIRST START: a region and its first API key were created.',
        `  Region: ${region.name} (${region.id})`,
        `  X-API-Key: ${key}`,
        '  This key is shown only now. Store it; create more with POST /auth/region/api-keys.',
        '================================================================================',
        '',
      ].join('\n') + '\n',
    );
  }
}

import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

import { AppConfig } from '../config';
import { type Transaction, UnitOfWork } from '../database';
import { UsersService } from '../users';
import { CelestialBodiesRepository } from './celestial-bodies.repository';
import { CelestialBodiesSettings } from './celestial-bodies.settings';
import { toPlanetValues } from './dto/planet-input.dto';
import { SAMPLE_PLANETS } from './sample-planets';

/** The creator of the samples. `.invalid` can receive no mail. */
const SAMPLES_USER = { name: 'Galaxy samples', email: 'samples@galaxy.invalid' };

/** Writes the sample planets; used at start (SampleData) and by a sandbox reset. */
@Injectable()
export class SampleSeeder {
  constructor(
    private readonly repository: CelestialBodiesRepository,
    private readonly users: UsersService,
  ) {}

  /**
   * Adds the samples in the caller's transaction, unless the samples user already exists
   * (it marks them done). Resolves to the number of planets added.
   */
  async seed(tx: Transaction): Promise<number> {
    const creator = await this.users.createAccountWithoutSignIn(tx, SAMPLES_USER);
    if (!creator) return 0;
    for (const { planet, satellites } of SAMPLE_PLANETS) {
      const planetId = await this.repository.insertPlanet(creator.id, toPlanetValues(planet), tx);
      for (const satellite of satellites) await this.repository.insertSatellite(tx, { ...satellite, planetId });
    }
    return SAMPLE_PLANETS.length;
  }
}

/**
 * Gives a newcomer something to see at their first GET /planets. With SEED_SAMPLE_DATA unset
 * that is the embedded database or a sandbox, while it holds no planets; SEED_SAMPLE_DATA=true
 * asks for it on any database, false never (refused in a sandbox). Either way once per
 * database: the samples user marks it done, so samples someone deleted do not come back at the
 * next start (a sandbox gets them back with `cli sandbox reset`).
 *
 * Only in the server: an operator command's application context (the CLI) has no HTTP
 * server, and its commands change only what they say. Told by the HTTP adapter, as
 * InitialRegion does, so that the feature stays one static module wherever it is imported.
 */
@Injectable()
export class SampleData implements OnApplicationBootstrap {
  private readonly logger = new Logger(SampleData.name);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly unitOfWork: UnitOfWork,
    private readonly repository: CelestialBodiesRepository,
    private readonly seeder: SampleSeeder,
    private readonly config: AppConfig,
    private readonly settings: CelestialBodiesSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.adapterHost.httpAdapter) return;
    const setting = this.settings.SEED_SAMPLE_DATA;
    const automatic = setting === undefined;
    if (setting === false || (automatic && this.config.postgresUrl && !this.config.isSandbox)) return;
    const added = await this.unitOfWork.run(async (tx) => {
      await this.repository.lockSampleData(tx);
      if (automatic && (await this.repository.hasAnyPlanet(tx))) return 0;
      return this.seeder.seed(tx);
    });
    if (added > 0)
      this.logger.log(
        `Added ${added} sample planets${this.config.isSandbox ? '' : ' (SEED_SAMPLE_DATA=false turns this off)'}`,
      );
  }
}

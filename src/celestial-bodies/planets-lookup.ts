import { Injectable } from '@nestjs/common';

import { INT4_MAX, type Transaction, UnitOfWork } from '../database';
import { PlanetNotFoundError } from './celestial-bodies.errors';
import { CelestialBodiesRepository } from './celestial-bodies.repository';

/**
 * What another feature may ask of the planets, for a resource of its own that belongs to a
 * planet (its table holding a foreign key to `planets`): does the planet exist, and a unit of
 * work during which it stays. A missing planet is the planets' own 404 problem
 * (PlanetNotFoundError), so a sub-resource answers for it as the planet's routes do.
 */
@Injectable()
export class PlanetsLookup {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly repository: CelestialBodiesRepository,
  ) {}

  /**
   * Throws PlanetNotFoundError (404) unless planet `planetId` exists; in the caller's
   * transaction when given one. A read only: the planet may be deleted right after, so
   * a write that depends on it belongs in withPlanetHeld.
   */
  async assertPlanetExists(planetId: number, tx?: Transaction): Promise<void> {
    if (!isPlanetId(planetId) || !(await this.repository.planetExists(planetId, tx))) {
      throw new PlanetNotFoundError(planetId);
    }
  }

  /**
   * Runs `work` in one transaction that holds planet `planetId` (its row share-locked), and
   * resolves with what `work` resolves with; throws PlanetNotFoundError (404) when the planet
   * does not exist, before `work` runs. Until the transaction ends the planet can be neither
   * changed nor deleted, so what `work` writes under it cannot outlive it or end up under a
   * planet being deleted. Queues in this process with the planet's own changes (PUT,
   * DELETE, image, satellites): keep `work` short, and give every repository call in it `tx`.
   */
  withPlanetHeld<T>(planetId: number, work: (tx: Transaction) => Promise<T>): Promise<T> {
    if (!isPlanetId(planetId)) return Promise.reject(new PlanetNotFoundError(planetId));
    return this.unitOfWork.runLockingRow(`planet:${planetId}`, async (tx) => {
      if (!(await this.repository.holdPlanet(tx, planetId))) throw new PlanetNotFoundError(planetId);
      return work(tx);
    });
  }
}

/** Planet ids are serial: an integer from 1 to INT4_MAX, anything else names no planet (and is not sent to the database). */
const isPlanetId = (id: number): boolean => Number.isInteger(id) && id >= 1 && id <= INT4_MAX;

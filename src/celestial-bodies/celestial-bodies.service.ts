import { createHash } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { Clock } from '../common/clock';
import { ValidationFailedError } from '../common/problem';
import { type Transaction, UnitOfWork } from '../database';
import { UsersService } from '../users';
import {
  NotPlanetCreatorError,
  OrbitedPlanetNotFoundError,
  PlanetImageNotFoundError,
  PlanetNotFoundError,
  PlanetPreconditionFailedError,
  SatelliteLimitError,
} from './celestial-bodies.errors';
import { CelestialBodiesRepository, type PlanetRecord, type SatelliteRecord } from './celestial-bodies.repository';
import type { PlanetPage, PlanetWithSatellites, SatelliteWithPlanet } from './celestial-bodies.types';
import { MAX_SATELLITES_PER_PLANET } from './celestial-body-types';
import { type PlanetBodyInputDto, type PlanetInputDto, toPlanetValues } from './dto/planet-input.dto';
import type { SatelliteInputDto } from './dto/satellite-input.dto';
import type { Planet } from './entities/planet.entity';
import type { PlanetImage } from './entities/planet-image.entity';
import type { ReceivedImage } from './image-upload';
import { failedCondition, type PlanetConditions } from './planet-etag';
import { UploadSlots } from './upload-slots';

@Injectable()
export class CelestialBodiesService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly repository: CelestialBodiesRepository,
    private readonly users: UsersService,
    private readonly uploads: UploadSlots,
    private readonly clock: Clock,
  ) {}

  /** Four queries whatever the page size: the page and the count, then the satellites and the creators. */
  async listPlanets(limit: number, offset: number): Promise<PlanetPage> {
    const [planets, total] = await Promise.all([
      this.repository.findPlanetPage(limit, offset),
      this.repository.countPlanets(),
    ]);
    return { items: await this.withSatellitesAndCreators(planets), total };
  }

  /** In the caller's transaction when given one. */
  async getPlanet(id: number, tx?: Transaction): Promise<PlanetWithSatellites> {
    const planet = await this.repository.findPlanet(id, tx);
    if (!planet) throw new PlanetNotFoundError(id);
    const [item] = await this.withSatellitesAndCreators([planet], tx);
    return item;
  }

  /** One statement, in a transaction of its own all the same: an Idempotency-Key claim commits with it. */
  async createPlanet(creatorId: number, input: PlanetInputDto | PlanetBodyInputDto): Promise<PlanetWithSatellites> {
    const id = await this.unitOfWork.run((tx) => this.repository.insertPlanet(creatorId, toPlanetValues(input), tx));
    return this.getPlanet(id);
  }

  /**
   * Replaces the planet's fields; only its creator may (see assertCreator). With `conditions`
   * (If-Match, If-None-Match), only while they hold for the planet as it is: see
   * assertConditions.
   */
  async updatePlanet(
    id: number,
    userId: number,
    input: PlanetInputDto,
    conditions: PlanetConditions = {},
  ): Promise<PlanetWithSatellites> {
    // A Galaxy client sends the planet's readOnly id back; any other id names another planet.
    if (input.id !== undefined && input.id !== id) {
      throw new ValidationFailedError([
        { field: 'id', message: `id must be ${id}, the planetId of the path, or be left out (got ${input.id})` },
      ]);
    }
    await this.assertCreator(id, userId);
    return this.unitOfWork.runLockingRow(`planet:${id}`, async (tx) => {
      await this.lockOwnPlanet(tx, id, userId);
      await this.assertConditions(tx, id, conditions);
      await this.repository.updatePlanet(tx, id, toPlanetValues(input));
      return this.getPlanet(id, tx);
    });
  }

  /** Deletes the planet with its satellites and image, in one transaction; only its creator may. `conditions` as for updatePlanet. */
  async deletePlanet(id: number, userId: number, conditions: PlanetConditions = {}): Promise<void> {
    await this.assertCreator(id, userId);
    await this.unitOfWork.runLockingRow(`planet:${id}`, async (tx) => {
      await this.lockOwnPlanet(tx, id, userId);
      await this.assertConditions(tx, id, conditions);
      await this.repository.deletePlanet(tx, id);
    });
  }

  /**
   * Adds a satellite to a planet; only its creator may, as for any change to the planet, so
   * that nobody can grow another user's planet. A planet has at most
   * MAX_SATELLITES_PER_PLANET satellites: they are counted with the planet's row locked
   * (FOR UPDATE, as every change to the planet takes it), so concurrent adds are counted one
   * after another and cannot all pass a count made before the others' inserts; the lock also
   * keeps a concurrent delete from removing the planet between the count and the insert.
   */
  async createSatellite(userId: number, input: SatelliteInputDto): Promise<SatelliteWithPlanet> {
    const planetId = input.orbit.planet.id;
    const missing = () => new OrbitedPlanetNotFoundError(planetId);
    createdBy(await this.repository.findPlanetCreatorId(planetId), planetId, userId, missing);
    return this.unitOfWork.runLockingRow(`planet:${planetId}`, async (tx) => {
      const planet = createdBy(await this.repository.lockPlanet(tx, planetId), planetId, userId, missing);
      if ((await this.repository.countSatellites(tx, planetId)) >= MAX_SATELLITES_PER_PLANET) {
        throw new SatelliteLimitError(planetId, MAX_SATELLITES_PER_PLANET);
      }
      const satellite = await this.repository.insertSatellite(tx, {
        planetId,
        name: input.name,
        description: input.description ?? null,
        diameter: input.diameter ?? null,
        type: input.type,
        orbitalPeriod: input.orbit.orbitalPeriod ?? null,
        distance: input.orbit.distance ?? null,
      });
      return { satellite, planet: { id: planet.id, name: planet.name } };
    });
  }

  /**
   * Stores the planet's image (replacing any). Who may upload is settled before a byte is
   * read; the upload is then read while it arrives (type and size checked on the way). Only
   * then does it take a store slot, so a client that sends slowly holds no slot, and only the
   * write happens under the planet's lock.
   */
  async uploadImage(planetId: number, userId: number, receive: () => Promise<ReceivedImage>): Promise<PlanetImage> {
    await this.assertCreator(planetId, userId);
    return this.uploads.forUser(userId, async () => {
      const { data, contentType } = await receive();
      return this.uploads.store(async () => {
        const image = {
          planetId,
          contentType,
          byteSize: data.length,
          sha256: createHash('sha256').update(data).digest('hex'),
          data,
          uploadedAt: this.clock.now(),
        };
        await this.unitOfWork.runLockingRow(`planet:${planetId}`, async (tx) => {
          await this.lockOwnPlanet(tx, planetId, userId);
          await this.repository.saveImage(tx, image);
        });
        return image;
      });
    });
  }

  /** The image's metadata (for a conditional request), or with `withData` its bytes too. */
  async getImage(planetId: number, withData: boolean): Promise<PlanetImage> {
    const image = await this.repository.findImage(planetId, withData);
    if (image) return image;
    // Both 404s; the detail says which is missing, the image or the planet.
    throw (await this.repository.planetExists(planetId))
      ? new PlanetImageNotFoundError(planetId)
      : new PlanetNotFoundError(planetId);
  }

  /**
   * The precondition of a conditional change, checked with the planet's row locked (by the
   * caller, in this transaction) against its representation as of now: two clients that
   * read the same ETag and change the planet at once cannot both succeed, as the second
   * finds the planet changed once the first has committed. Without conditional headers the
   * planet is not read for it.
   */
  private async assertConditions(tx: Transaction, id: number, conditions: PlanetConditions): Promise<void> {
    if (conditions.ifMatch === undefined && conditions.ifNoneMatch === undefined) return;
    const failed = failedCondition(conditions, await this.getPlanet(id, tx));
    if (failed) throw new PlanetPreconditionFailedError(id, failed);
  }

  /**
   * Who may change the planet, settled before queueing for its row lock: one read by primary
   * key, no lock, no transaction. Without it a flood of refused writes from other users
   * would each wait for the row in turn and delay its creator's own change behind them.
   * The same rule is checked again under the lock (lockOwnPlanet), which alone is
   * authoritative: the planet may be deleted (or, some day, change hands) in between.
   */
  private async assertCreator(id: number, userId: number): Promise<void> {
    createdBy(await this.repository.findPlanetCreatorId(id), id, userId);
  }

  private async lockOwnPlanet(tx: Transaction, id: number, userId: number): Promise<Planet> {
    return createdBy(await this.repository.lockPlanet(tx, id), id, userId);
  }

  /**
   * Two queries for any number of planets: their satellites, and their creators (from the users
   * feature). Side by side on the pool; one after the other in a transaction, whose one
   * connection takes one query at a time (pg queues a second and warns; pg 9 refuses it).
   */
  private async withSatellitesAndCreators(planets: PlanetRecord[], tx?: Transaction): Promise<PlanetWithSatellites[]> {
    const satellitesOf = () =>
      this.repository.findSatellitesOf(
        planets.map((p) => p.id),
        tx,
      );
    const creatorsOf = () =>
      this.users.findProfiles(
        planets.map((p) => p.creatorId),
        tx,
      );
    const [satellites, creators] = tx
      ? [await satellitesOf(), await creatorsOf()]
      : await Promise.all([satellitesOf(), creatorsOf()]);
    const byPlanet = new Map<number, SatelliteRecord[]>();
    for (const satellite of satellites) {
      const list = byPlanet.get(satellite.planetId);
      if (list) list.push(satellite);
      else byPlanet.set(satellite.planetId, [satellite]);
    }
    return planets.map((planet) => {
      // The foreign key (ON DELETE RESTRICT) keeps every creator in place.
      const creator = creators.get(planet.creatorId);
      if (!creator) throw new Error(`Planet ${planet.id}: creator ${planet.creatorId} not found`);
      return { planet, satellites: byPlanet.get(planet.id) ?? [], creator };
    });
  }
}

/** `planet` when it exists and user `userId` created it; else the 404 (`notFound`) or the 403 every change answers. */
function createdBy<P extends Pick<Planet, 'creatorId'>>(
  planet: P | null,
  id: number,
  userId: number,
  notFound: () => Error = () => new PlanetNotFoundError(id),
): P {
  if (!planet) throw notFound();
  if (planet.creatorId !== userId) throw new NotPlanetCreatorError();
  return planet;
}

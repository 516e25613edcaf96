import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { RowLockGate } from '../database/row-lock-gate';
import { type UserProfile, UsersService } from '../users/users.service';
import { CelestialBodiesRepository, type PlanetRecord, type SatelliteRecord } from './celestial-bodies.repository';
import {
  NotPlanetCreatorError,
  OrbitedPlanetNotFoundError,
  PlanetChangedError,
  PlanetImageNotFoundError,
  PlanetNotFoundError,
} from './celestial-bodies.errors';
import { planetEtagHolds } from './planet-etag';
import { toPlanetValues, type PlanetBodyInputDto, type PlanetInputDto } from './dto/planet-input.dto';
import type { SatelliteInputDto } from './dto/satellite-input.dto';
import type { Planet } from './entities/planet.entity';
import type { PlanetImage } from './entities/planet-image.entity';
import type { Satellite } from './entities/satellite.entity';
import type { ReceivedImage } from './image-upload';
import { UploadSlots } from './upload-slots';

export interface PlanetWithSatellites {
  planet: PlanetRecord;
  satellites: SatelliteRecord[];
  creator: UserProfile;
}

export interface PlanetPage {
  items: PlanetWithSatellites[];
  total: number;
}

export interface SatelliteWithPlanet {
  satellite: Satellite;
  planet: Pick<Planet, 'id' | 'name'>;
}

@Injectable()
export class CelestialBodiesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: CelestialBodiesRepository,
    private readonly users: UsersService,
    private readonly rowLocks: RowLockGate,
    private readonly uploads: UploadSlots,
  ) {}

  /** Four queries whatever the page size: the page and the count, then the satellites and the creators. */
  async listPlanets(limit: number, offset: number): Promise<PlanetPage> {
    const [planets, total] = await Promise.all([this.repository.findPlanetPage(limit, offset), this.repository.countPlanets()]);
    return { items: await this.withSatellitesAndCreators(planets), total };
  }

  /** In the caller's transaction when given its manager. */
  async getPlanet(id: number, manager?: EntityManager): Promise<PlanetWithSatellites> {
    const planet = await this.repository.findPlanet(id, manager);
    if (!planet) throw new PlanetNotFoundError(id);
    const [item] = await this.withSatellitesAndCreators([planet], manager);
    return item;
  }

  async createPlanet(creatorId: number, input: PlanetInputDto | PlanetBodyInputDto): Promise<PlanetWithSatellites> {
    const id = await this.repository.insertPlanet(this.dataSource.manager, creatorId, toPlanetValues(input));
    return this.getPlanet(id);
  }

  /**
   * Replaces the planet's fields; only its creator may. With `ifMatch` (the If-Match header),
   * only while the planet is as the client last read it: see assertUnchanged.
   */
  async updatePlanet(id: number, userId: number, input: PlanetInputDto, ifMatch?: string): Promise<PlanetWithSatellites> {
    return this.rowLocks.transaction(`planet:${id}`, async (manager) => {
      await this.lockOwnPlanet(manager, id, userId);
      if (ifMatch !== undefined) await this.assertUnchanged(manager, id, ifMatch);
      await this.repository.updatePlanet(manager, id, toPlanetValues(input));
      return this.getPlanet(id, manager);
    });
  }

  /** Deletes the planet with its satellites and image, in one transaction; only its creator may. `ifMatch` as for updatePlanet. */
  async deletePlanet(id: number, userId: number, ifMatch?: string): Promise<void> {
    await this.rowLocks.transaction(`planet:${id}`, async (manager) => {
      await this.lockOwnPlanet(manager, id, userId);
      if (ifMatch !== undefined) await this.assertUnchanged(manager, id, ifMatch);
      await this.repository.deletePlanet(manager, id);
    });
  }

  /**
   * Any signed-in user may add a satellite to any planet (the contract restricts only changes
   * to the planet itself). The planet is share-locked so a concurrent delete cannot remove it
   * between the check and the insert (which would otherwise fail on the foreign key).
   */
  createSatellite(input: SatelliteInputDto): Promise<SatelliteWithPlanet> {
    const planetId = input.orbit.planet.id;
    return this.rowLocks.transaction(`planet:${planetId}`, async (manager) => {
      const planet = await this.repository.sharePlanet(manager, planetId);
      if (!planet) throw new OrbitedPlanetNotFoundError(planetId);
      const satellite = await this.repository.insertSatellite(manager, {
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
    const owner = await this.repository.findPlanetCreatorId(planetId);
    if (!owner) throw new PlanetNotFoundError(planetId);
    if (owner.creatorId !== userId) throw new NotPlanetCreatorError();
    return this.uploads.forUser(userId, async () => {
      const { data, contentType } = await receive();
      return this.uploads.store(async () => {
        const image = {
          planetId,
          contentType,
          byteSize: data.length,
          sha256: createHash('sha256').update(data).digest('hex'),
          data,
          uploadedAt: new Date(),
        };
        await this.rowLocks.transaction(`planet:${planetId}`, async (manager) => {
          await this.lockOwnPlanet(manager, planetId, userId);
          await this.repository.saveImage(manager, image);
        });
        return image;
      });
    });
  }

  /** The image's metadata (for a conditional request), or with `withData` its bytes too. */
  async getImage(planetId: number, withData: boolean): Promise<PlanetImage> {
    const image = await this.repository.findImage(planetId, withData);
    if (!image) throw new PlanetImageNotFoundError(planetId);
    return image;
  }

  /**
   * The precondition of a conditional change, checked with the planet's row locked (by the
   * caller, in this transaction) against its representation as of now: two clients that
   * read the same ETag and change the planet at once cannot both succeed, as the second
   * finds the planet changed once the first has committed.
   */
  private async assertUnchanged(manager: EntityManager, id: number, ifMatch: string): Promise<void> {
    if (!planetEtagHolds(ifMatch, await this.getPlanet(id, manager))) throw new PlanetChangedError(id);
  }

  private async lockOwnPlanet(manager: EntityManager, id: number, userId: number): Promise<Planet> {
    const planet = await this.repository.lockPlanet(manager, id);
    if (!planet) throw new PlanetNotFoundError(id);
    if (planet.creatorId !== userId) throw new NotPlanetCreatorError();
    return planet;
  }

  /** Two queries for any number of planets: their satellites, and their creators (from the users feature). */
  private async withSatellitesAndCreators(planets: PlanetRecord[], manager?: EntityManager): Promise<PlanetWithSatellites[]> {
    const [satellites, creators] = await Promise.all([
      this.repository.findSatellitesOf(planets.map((p) => p.id), manager),
      this.users.findProfiles(planets.map((p) => p.creatorId), manager),
    ]);
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

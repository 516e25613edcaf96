import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, SelectQueryBuilder } from 'typeorm';
import { ADVISORY_LOCKS } from '../database/advisory-locks';
import { Planet } from './entities/planet.entity';
import { PlanetImage } from './entities/planet-image.entity';
import { Satellite } from './entities/satellite.entity';

/** The columns a client sets (POST and PUT /planets); the rest belong to the server. */
export type PlanetValues = Pick<
  Planet,
  | 'name'
  | 'description'
  | 'type'
  | 'habitabilityIndex'
  | 'mass'
  | 'radius'
  | 'gravity'
  | 'temperatureMin'
  | 'temperatureMax'
  | 'temperatureAverage'
  | 'atmosphere'
  | 'discoveredAt'
  | 'tags'
>;

export type SatelliteValues = Pick<Satellite, 'planetId' | 'name' | 'description' | 'diameter' | 'type' | 'orbitalPeriod' | 'distance'>;

export type NewPlanetImage = Required<Pick<PlanetImage, 'planetId' | 'contentType' | 'byteSize' | 'sha256' | 'data' | 'uploadedAt'>>;

/**
 * All SQL of the celestial bodies. Methods that take an EntityManager run inside the
 * caller's transaction; the others use the pool. Reads of planets never load image bytes.
 */
@Injectable()
export class CelestialBodiesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One query: a page of planets by id, each with its image's metadata. LIMIT/OFFSET are
   * safe here because the join is to-one.
   */
  findPlanetPage(limit: number, offset: number): Promise<Planet[]> {
    return this.planetsWithImage().orderBy('planet.id', 'ASC').limit(limit).offset(offset).getMany();
  }

  countPlanets(): Promise<number> {
    return this.dataSource.getRepository(Planet).count();
  }

  /** One query: a planet with its image metadata. */
  findPlanet(id: number): Promise<Planet | null> {
    return this.planetsWithImage().where('planet.id = :id', { id }).getOne();
  }

  /** One query for the satellites of any number of planets, in planet order, then oldest first. */
  findSatellitesOf(planetIds: number[]): Promise<Satellite[]> {
    if (planetIds.length === 0) return Promise.resolve([]);
    return this.dataSource.getRepository(Satellite).find({
      where: { planetId: In(planetIds) },
      order: { planetId: 'ASC', id: 'ASC' },
    });
  }

  findPlanetCreatorId(id: number): Promise<Pick<Planet, 'id' | 'creatorId'> | null> {
    return this.dataSource.getRepository(Planet).findOne({ select: { id: true, creatorId: true }, where: { id } });
  }

  /**
   * SELECT ... FOR UPDATE on the planet row alone (no joins): changes to one planet, and
   * satellites being added to it, happen one after another.
   */
  lockPlanet(manager: EntityManager, id: number): Promise<Planet | null> {
    return manager.getRepository(Planet).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** SELECT ... FOR SHARE: the planet cannot be deleted until the caller's transaction ends. */
  sharePlanet(manager: EntityManager, id: number): Promise<Planet | null> {
    return manager.getRepository(Planet).findOne({ where: { id }, lock: { mode: 'pessimistic_read' } });
  }

  async insertPlanet(manager: EntityManager, creatorId: number, values: PlanetValues): Promise<number> {
    const result = await manager.getRepository(Planet).insert({ ...values, creatorId });
    return (result.identifiers[0] as { id: number }).id;
  }

  async updatePlanet(manager: EntityManager, id: number, values: PlanetValues): Promise<void> {
    await manager.getRepository(Planet).update({ id }, values);
  }

  /** Its satellites and image go with it, in the same statement (ON DELETE CASCADE). */
  async deletePlanet(manager: EntityManager, id: number): Promise<void> {
    await manager.getRepository(Planet).delete({ id });
  }

  insertSatellite(manager: EntityManager, values: SatelliteValues): Promise<Satellite> {
    const repository = manager.getRepository(Satellite);
    return repository.save(repository.create(values));
  }

  /** Adds or replaces the planet's image (one row per planet). */
  async saveImage(manager: EntityManager, image: NewPlanetImage): Promise<void> {
    await manager.getRepository(PlanetImage).upsert(image, { conflictPaths: ['planetId'] });
  }

  /** The image's metadata, or with `withData` its bytes too. */
  findImage(planetId: number, withData: boolean): Promise<PlanetImage | null> {
    const query = this.dataSource.getRepository(PlanetImage).createQueryBuilder('image').where('image.planet_id = :planetId', { planetId });
    return (withData ? query.addSelect('image.data') : query).getOne();
  }

  // Sample data (see sample-data.ts).

  /** Makes concurrent first starts of several instances seed one after another. */
  async lockSampleData(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.sampleData]);
  }

  async hasAnyPlanet(manager: EntityManager): Promise<boolean> {
    return manager.getRepository(Planet).exists();
  }

  private planetsWithImage(): SelectQueryBuilder<Planet> {
    return this.dataSource
      .getRepository(Planet)
      .createQueryBuilder('planet')
      .leftJoinAndMapOne('planet.image', PlanetImage, 'image', 'image.planet_id = planet.id');
  }
}

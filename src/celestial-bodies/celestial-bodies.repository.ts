import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { ADVISORY_LOCKS, managerOf, type Transaction } from '../database';
import { MAX_SATELLITES_PER_PLANET } from './celestial-body-types';
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
  | 'extraMeasurements'
  | 'atmosphere'
  | 'discoveredAt'
  | 'tags'
>;

export type SatelliteValues = Pick<
  Satellite,
  'planetId' | 'name' | 'description' | 'diameter' | 'type' | 'orbitalPeriod' | 'distance'
>;

/**
 * A planet as readers get it: its columns, and whether it has an image (never the image).
 * Its creator comes from the users feature.
 */
export type PlanetRecord = PlanetValues & Pick<Planet, 'id' | 'creatorId' | 'updatedAt'> & { hasImage: boolean };

export type SatelliteRecord = Pick<
  Satellite,
  'id' | 'planetId' | 'name' | 'description' | 'diameter' | 'type' | 'orbitalPeriod' | 'distance'
>;

// Plain SQL, with columns named as the records' fields, so rows are the records as they come:
// on a page of planets TypeORM's query building and hydration cost more than the queries.
const SELECT_PLANETS = `
  SELECT planet.id, planet.name, planet.description, planet.type, planet.habitability_index AS "habitabilityIndex",
         planet.mass, planet.radius, planet.gravity, planet.temperature_min AS "temperatureMin",
         planet.temperature_max AS "temperatureMax", planet.temperature_average AS "temperatureAverage",
         planet.extra_measurements AS "extraMeasurements", planet.atmosphere, planet.discovered_at AS "discoveredAt", planet.tags, planet.creator_id AS "creatorId",
         planet.updated_at AS "updatedAt", image.planet_id IS NOT NULL AS "hasImage"
    FROM planets planet
    LEFT JOIN planet_images image ON image.planet_id = planet.id`;

export type NewPlanetImage = Required<
  Pick<PlanetImage, 'planetId' | 'contentType' | 'byteSize' | 'sha256' | 'data' | 'uploadedAt'>
>;

/**
 * All SQL of the celestial bodies. Methods that take a Transaction run inside the
 * caller's transaction; the others use the pool. Reads of planets never load image bytes.
 */
@Injectable()
export class CelestialBodiesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One query: a page of planets by id, each with whether it has an image. LIMIT/OFFSET are
   * safe here because the join is to-one.
   */
  findPlanetPage(limit: number, offset: number): Promise<PlanetRecord[]> {
    return this.dataSource.query(`${SELECT_PLANETS} ORDER BY planet.id LIMIT $1 OFFSET $2`, [limit, offset]);
  }

  async countPlanets(): Promise<number> {
    const [{ count }]: [{ count: number }] = await this.dataSource.query('SELECT count(*)::int AS count FROM planets');
    return count;
  }

  /** In the caller's transaction when given one, as findSatellitesOf. */
  async findPlanet(id: number, tx?: Transaction): Promise<PlanetRecord | null> {
    const rows: PlanetRecord[] = await managerOf(tx, this.dataSource).query(`${SELECT_PLANETS} WHERE planet.id = $1`, [
      id,
    ]);
    return rows[0] ?? null;
  }

  /**
   * One query for the satellites of any number of planets, in planet order, then oldest
   * first: at most MAX_SATELLITES_PER_PLANET of each, read by index, so that what a planet
   * embeds stays bounded even where rows from before the limit exceed it.
   */
  findSatellitesOf(planetIds: number[], tx?: Transaction): Promise<SatelliteRecord[]> {
    if (planetIds.length === 0) return Promise.resolve([]);
    return managerOf(tx, this.dataSource).query(
      `SELECT s.id, s.planet_id AS "planetId", s.name, s.description, s.diameter, s.type,
              s.orbital_period AS "orbitalPeriod", s.distance
         FROM unnest($1::int[]) AS planet(id)
        CROSS JOIN LATERAL (SELECT * FROM satellites WHERE planet_id = planet.id ORDER BY id LIMIT $2) s
        ORDER BY s.planet_id, s.id`,
      [planetIds, MAX_SATELLITES_PER_PLANET],
    );
  }

  /** How many satellites the planet has (its row locked by the caller, so that none is added meanwhile). */
  async countSatellites(tx: Transaction, planetId: number): Promise<number> {
    const [{ count }]: [{ count: number }] = await managerOf(tx).query(
      'SELECT count(*)::int AS count FROM satellites WHERE planet_id = $1',
      [planetId],
    );
    return count;
  }

  /** In the caller's transaction when given one. */
  async planetExists(id: number, tx?: Transaction): Promise<boolean> {
    const rows: unknown[] = await managerOf(tx, this.dataSource).query('SELECT 1 FROM planets WHERE id = $1', [id]);
    return rows.length > 0;
  }

  /**
   * SELECT 1 ... FOR SHARE: whether the planet exists, and if so it cannot be changed or
   * deleted until the caller's transaction ends (sharePlanet without reading the row).
   */
  async holdPlanet(tx: Transaction, id: number): Promise<boolean> {
    const rows: unknown[] = await managerOf(tx).query('SELECT 1 FROM planets WHERE id = $1 FOR SHARE', [id]);
    return rows.length > 0;
  }

  /** One read by primary key, without a lock: who may change the planet, asked before queueing for its row. */
  findPlanetCreatorId(id: number): Promise<Pick<Planet, 'id' | 'creatorId'> | null> {
    return this.dataSource.getRepository(Planet).findOne({ select: { id: true, creatorId: true }, where: { id } });
  }

  /**
   * SELECT ... FOR UPDATE on the planet row alone (no joins): changes to one planet, and
   * satellites being added to it, happen one after another.
   */
  lockPlanet(tx: Transaction, id: number): Promise<Planet | null> {
    return managerOf(tx)
      .getRepository(Planet)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** In the caller's transaction when given one. */
  async insertPlanet(creatorId: number, values: PlanetValues, tx?: Transaction): Promise<number> {
    const result = await managerOf(tx, this.dataSource)
      .getRepository(Planet)
      .insert({ ...values, creatorId });
    return (result.identifiers[0] as { id: number }).id;
  }

  async updatePlanet(tx: Transaction, id: number, values: PlanetValues): Promise<void> {
    await managerOf(tx).getRepository(Planet).update({ id }, values);
  }

  /** Its satellites and image go with it, in the same statement (ON DELETE CASCADE). */
  async deletePlanet(tx: Transaction, id: number): Promise<void> {
    await managerOf(tx).getRepository(Planet).delete({ id });
  }

  insertSatellite(tx: Transaction, values: SatelliteValues): Promise<Satellite> {
    const repository = managerOf(tx).getRepository(Satellite);
    return repository.save(repository.create(values));
  }

  /** Adds or replaces the planet's image (one row per planet). */
  async saveImage(tx: Transaction, image: NewPlanetImage): Promise<void> {
    await managerOf(tx)
      .getRepository(PlanetImage)
      .upsert(image, { conflictPaths: ['planetId'] });
  }

  /** The image's metadata, or with `withData` its bytes too. */
  findImage(planetId: number, withData: boolean): Promise<PlanetImage | null> {
    const query = this.dataSource
      .getRepository(PlanetImage)
      .createQueryBuilder('image')
      .where('image.planet_id = :planetId', { planetId });
    return (withData ? query.addSelect('image.data') : query).getOne();
  }

  // Sample data (see sample-data.ts).

  /** Makes concurrent first starts of several instances seed one after another. */
  async lockSampleData(tx: Transaction): Promise<void> {
    await managerOf(tx).query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.sampleData]);
  }

  async hasAnyPlanet(tx: Transaction): Promise<boolean> {
    return managerOf(tx).getRepository(Planet).exists();
  }
}

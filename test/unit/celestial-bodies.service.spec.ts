import { createHash } from 'node:crypto';

import { NotPlanetCreatorError, PlanetNotFoundError } from '../../src/celestial-bodies/celestial-bodies.errors';
import { CelestialBodiesRepository } from '../../src/celestial-bodies/celestial-bodies.repository';
import { CelestialBodiesService } from '../../src/celestial-bodies/celestial-bodies.service';
import type { CelestialBodiesSettings } from '../../src/celestial-bodies/celestial-bodies.settings';
import type { PlanetInputDto } from '../../src/celestial-bodies/dto/planet-input.dto';
import { Planet } from '../../src/celestial-bodies/entities/planet.entity';
import type { ReceivedImage } from '../../src/celestial-bodies/image-upload';
import { UploadSlots } from '../../src/celestial-bodies/upload-slots';
import type { Clock } from '../../src/common/clock/clock';
import { UsersService } from '../../src/users/users.service';
import { automock, expectCalledInOrder, fakeUnitOfWork } from '../support/service-mocks';

const CREATOR_ID = 1;
const OTHER_USER_ID = 2;
const PLANET_ID = 7;
const NOW = new Date('2026-11-22T10:15:00.000Z');

function newCelestialBodiesServiceTest() {
  const repository = automock(CelestialBodiesRepository);
  const users = automock(UsersService);
  users.findProfiles.mockImplementation(async (ids) => new Map(ids.map((id) => [id, { id, name: `User ${id}` }])));
  const { unitOfWork, transaction } = fakeUnitOfWork();
  const clock = { now: () => new Date(NOW) } satisfies Clock;
  return {
    sut: new CelestialBodiesService(
      unitOfWork,
      repository,
      users,
      new UploadSlots({ UPLOAD_CONCURRENCY: 4 } as CelestialBodiesSettings),
      clock,
    ),
    repository,
    users,
    tx: transaction,
    runLockingRow: jest.spyOn(unitOfWork, 'runLockingRow'),
  };
}

const newPlanet = (): Planet =>
  Object.assign(new Planet(), { id: PLANET_ID, name: 'Kepler-22b', creatorId: CREATOR_ID });

const input = { name: 'Kepler-22b', description: 'Renamed' } as PlanetInputDto;

/**
 * PUT and DELETE /planets/{id} share one rule: only the planet's creator may write. It is
 * checked before queueing for the planet's row lock, so refusals never wait for it, and again
 * under the lock.
 */
const changes = [
  {
    change: 'updatePlanet',
    run: (sut: CelestialBodiesService, userId: number) => sut.updatePlanet(PLANET_ID, userId, input),
    write: 'updatePlanet',
    written: [PLANET_ID, expect.objectContaining({ name: 'Kepler-22b', description: 'Renamed' })],
  },
  {
    change: 'deletePlanet',
    run: (sut: CelestialBodiesService, userId: number) => sut.deletePlanet(PLANET_ID, userId),
    write: 'deletePlanet',
    written: [PLANET_ID],
  },
] as const;

describe(CelestialBodiesService.name, () => {
  let sut: CelestialBodiesService;
  let repository: jest.Mocked<CelestialBodiesRepository>;
  let tx: unknown;
  let runLockingRow: jest.SpyInstance;

  beforeEach(() => {
    ({ sut, repository, tx, runLockingRow } = newCelestialBodiesServiceTest());
    repository.findPlanet.mockResolvedValue(Object.assign(newPlanet(), { hasImage: false }));
    repository.findSatellitesOf.mockResolvedValue([]);
  });

  it('reads a planet in a transaction one query at a time (its one connection takes one), and outside one side by side', async () => {
    const { sut, repository, users, tx } = newCelestialBodiesServiceTest();
    repository.findPlanet.mockResolvedValue(Object.assign(newPlanet(), { hasImage: false }));
    for (const [within, creatorsAskedBeforeSatellitesCame] of [
      [tx, false],
      [undefined, true],
    ] as const) {
      let answer!: (satellites: []) => void;
      repository.findSatellitesOf.mockReturnValueOnce(new Promise((resolve) => (answer = resolve)));
      users.findProfiles.mockClear();
      const reading = sut.getPlanet(PLANET_ID, within);
      await new Promise((resolve) => setImmediate(resolve));
      expect(users.findProfiles.mock.calls.length > 0).toBe(creatorsAskedBeforeSatellitesCame);
      answer([]);
      await expect(reading).resolves.toMatchObject({ creator: { id: CREATOR_ID } });
      expect(users.findProfiles).toHaveBeenCalledWith([CREATOR_ID], within);
    }
  });

  describe.each(changes)('$change: creator only', ({ run, write, written }) => {
    beforeEach(() => {
      repository.findPlanetCreatorId.mockResolvedValue({ id: PLANET_ID, creatorId: CREATOR_ID });
      repository.lockPlanet.mockResolvedValue(newPlanet());
    });

    it("refuses another user with the forbidden error before queueing for the planet's row", async () => {
      const refusal = run(sut, OTHER_USER_ID);

      await expect(refusal).rejects.toBeInstanceOf(NotPlanetCreatorError);
      await expect(refusal).rejects.toMatchObject({ status: 403 });
      expect(runLockingRow).not.toHaveBeenCalled();
      expect(repository[write]).not.toHaveBeenCalled();
    });

    it("lets the creator write, under the planet's row lock in the same transaction", async () => {
      await run(sut, CREATOR_ID);

      expect(repository.lockPlanet).toHaveBeenCalledWith(tx, PLANET_ID);
      expect(repository[write]).toHaveBeenCalledWith(tx, ...written);
      expectCalledInOrder(repository.lockPlanet, repository[write]);
    });

    it("answers not-found for a missing planet before queueing for the planet's row", async () => {
      repository.findPlanetCreatorId.mockResolvedValue(null);

      await expect(run(sut, CREATOR_ID)).rejects.toBeInstanceOf(PlanetNotFoundError);
      expect(runLockingRow).not.toHaveBeenCalled();
      expect(repository[write]).not.toHaveBeenCalled();
    });

    it('checks again under the lock: not-found for a planet deleted since, forbidden for one that changed hands', async () => {
      repository.lockPlanet.mockResolvedValueOnce(null);
      await expect(run(sut, CREATOR_ID)).rejects.toBeInstanceOf(PlanetNotFoundError);

      repository.lockPlanet.mockResolvedValueOnce(Object.assign(newPlanet(), { creatorId: OTHER_USER_ID }));
      await expect(run(sut, CREATOR_ID)).rejects.toBeInstanceOf(NotPlanetCreatorError);

      expect(repository[write]).not.toHaveBeenCalled();
    });
  });

  describe('uploadImage: creator only, settled before the upload is read', () => {
    const image: ReceivedImage = { data: Buffer.from('89504e470d0a1a0a', 'hex'), contentType: 'image/png' };
    let receive: jest.Mock<Promise<ReceivedImage>, []>;

    beforeEach(() => {
      receive = jest.fn(async () => image);
      repository.findPlanetCreatorId.mockResolvedValue({ id: PLANET_ID, creatorId: CREATOR_ID });
      repository.lockPlanet.mockResolvedValue(newPlanet());
    });

    it('refuses another user without reading the upload or storing anything', async () => {
      await expect(sut.uploadImage(PLANET_ID, OTHER_USER_ID, receive)).rejects.toBeInstanceOf(NotPlanetCreatorError);
      expect(receive).not.toHaveBeenCalled();
      expect(repository.saveImage).not.toHaveBeenCalled();
    });

    it("stores the creator's image, with its size, SHA-256 and the clock's time, under the planet's row lock", async () => {
      await sut.uploadImage(PLANET_ID, CREATOR_ID, receive);

      expect(repository.saveImage).toHaveBeenCalledWith(
        tx,
        expect.objectContaining({
          planetId: PLANET_ID,
          contentType: 'image/png',
          byteSize: image.data.length,
          sha256: createHash('sha256').update(image.data).digest('hex'),
          data: image.data,
          uploadedAt: NOW,
        }),
      );
      expect(repository.lockPlanet).toHaveBeenCalledWith(tx, PLANET_ID);
      expectCalledInOrder(repository.lockPlanet, repository.saveImage);
    });

    it('answers not-found for a missing planet without reading the upload', async () => {
      repository.findPlanetCreatorId.mockResolvedValue(null);

      await expect(sut.uploadImage(PLANET_ID, CREATOR_ID, receive)).rejects.toBeInstanceOf(PlanetNotFoundError);
      expect(receive).not.toHaveBeenCalled();
      expect(repository.saveImage).not.toHaveBeenCalled();
    });

    it('stores nothing when the planet is deleted while the upload arrives', async () => {
      repository.lockPlanet.mockResolvedValue(null);

      await expect(sut.uploadImage(PLANET_ID, CREATOR_ID, receive)).rejects.toBeInstanceOf(PlanetNotFoundError);
      expect(repository.saveImage).not.toHaveBeenCalled();
    });
  });
});

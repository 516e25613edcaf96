import { PlanetNotFoundError } from '../../src/celestial-bodies/celestial-bodies.errors';
import { CelestialBodiesRepository } from '../../src/celestial-bodies/celestial-bodies.repository';
import { PlanetsLookup } from '../../src/celestial-bodies/planets-lookup';
import type { Transaction } from '../../src/database/unit-of-work';
import { automock, expectCalledInOrder, fakeUnitOfWork } from '../support/service-mocks';

const PLANET_ID = 7;

function newPlanetsLookupTest() {
  const repository = automock(CelestialBodiesRepository);
  const { unitOfWork, transaction } = fakeUnitOfWork();
  const runLockingRow = jest.spyOn(unitOfWork, 'runLockingRow');
  return { sut: new PlanetsLookup(unitOfWork, repository), repository, tx: transaction, runLockingRow };
}

describe(PlanetsLookup.name, () => {
  describe('assertPlanetExists', () => {
    it('resolves for a planet, in the transaction given', async () => {
      const { sut, repository, tx } = newPlanetsLookupTest();
      repository.planetExists.mockResolvedValue(true);
      await expect(sut.assertPlanetExists(PLANET_ID, tx)).resolves.toBeUndefined();
      expect(repository.planetExists).toHaveBeenCalledWith(PLANET_ID, tx);
    });

    it("throws the planets' 404 for none", async () => {
      const { sut, repository } = newPlanetsLookupTest();
      repository.planetExists.mockResolvedValue(false);
      await expect(sut.assertPlanetExists(PLANET_ID)).rejects.toThrow(new PlanetNotFoundError(PLANET_ID));
    });

    it.each([0, -1, 1.5, 2147483648, NaN])(
      'throws a 404 for %p, which names no planet, without a query',
      async (id) => {
        const { sut, repository } = newPlanetsLookupTest();
        await expect(sut.assertPlanetExists(id)).rejects.toBeInstanceOf(PlanetNotFoundError);
        expect(repository.planetExists).not.toHaveBeenCalled();
      },
    );
  });

  describe('withPlanetHeld', () => {
    it("holds the planet's row, queued as the planet's own changes are, then runs the work in that transaction", async () => {
      const { sut, repository, tx, runLockingRow } = newPlanetsLookupTest();
      repository.holdPlanet.mockResolvedValue(true);
      const work = jest.fn(async (_tx: Transaction) => 'done').mockName('work');
      await expect(sut.withPlanetHeld(PLANET_ID, work)).resolves.toBe('done');
      expect(runLockingRow).toHaveBeenCalledWith(`planet:${PLANET_ID}`, expect.any(Function));
      expect(repository.holdPlanet).toHaveBeenCalledWith(tx, PLANET_ID);
      expect(work).toHaveBeenCalledWith(tx);
      expectCalledInOrder(repository.holdPlanet, work);
    });

    it('throws a 404, and never runs the work, when the planet does not exist', async () => {
      const { sut, repository } = newPlanetsLookupTest();
      repository.holdPlanet.mockResolvedValue(false);
      const work = jest.fn(async () => 'done');
      await expect(sut.withPlanetHeld(PLANET_ID, work)).rejects.toThrow(new PlanetNotFoundError(PLANET_ID));
      expect(work).not.toHaveBeenCalled();
    });

    it('throws a 404 for an id that names no planet, without opening a transaction', async () => {
      const { sut, runLockingRow } = newPlanetsLookupTest();
      const work = jest.fn(async () => 'done');
      await expect(sut.withPlanetHeld(0, work)).rejects.toBeInstanceOf(PlanetNotFoundError);
      expect(runLockingRow).not.toHaveBeenCalled();
      expect(work).not.toHaveBeenCalled();
    });
  });
});

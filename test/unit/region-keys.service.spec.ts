import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../../src/config/app-config';
import { generateApiKey, hashApiKey } from '../../src/region-keys/api-key-codec';
import { ApiKey } from '../../src/region-keys/entities/api-key.entity';
import { Region } from '../../src/region-keys/entities/region.entity';
import { ApiKeyLimitError, ApiKeyNotFoundError, LastApiKeyError, RegionNotFoundError } from '../../src/region-keys/region-keys.errors';
import { RegionKeysRepository } from '../../src/region-keys/region-keys.repository';
import { RegionKeysService } from '../../src/region-keys/region-keys.service';
import { automock, expectCalledInOrder, fakeDataSource, passThroughRowLocks } from '../support/service-mocks';

const KEY_LIMIT = 3;

function newRegionKeysServiceTest() {
  const repository = automock(RegionKeysRepository);
  const { dataSource, transactionManager } = fakeDataSource();
  const config = { MAX_API_KEYS_PER_REGION: KEY_LIMIT, API_KEY_LAST_USED_RESOLUTION_SECONDS: 60 } as AppConfig;
  return { sut: new RegionKeysService(dataSource, repository, config, passThroughRowLocks(dataSource)), repository, manager: transactionManager };
}

const newRegion = (): Region => Object.assign(new Region(), { id: randomUUID(), name: 'North' });

const newKey = (regionId: string): ApiKey =>
  Object.assign(new ApiKey(), { id: randomUUID(), regionId, description: null, lastUsedAt: null, revokedAt: null });

describe(RegionKeysService.name, () => {
  let sut: RegionKeysService;
  let repository: jest.Mocked<RegionKeysRepository>;
  let manager: unknown;
  let region: Region;

  beforeEach(() => {
    ({ sut, repository, manager } = newRegionKeysServiceTest());
    region = newRegion();
    repository.lockRegion.mockResolvedValue(true);
  });

  describe('revokeKey: a region keeps at least one active key', () => {
    it('refuses to revoke the only active key, and revokes nothing', async () => {
      const only = newKey(region.id);
      repository.hasActiveKeyInRegion.mockResolvedValue(true);
      repository.countActiveKeys.mockResolvedValue(1);

      await expect(sut.revokeKey(region.id, only.id)).rejects.toBeInstanceOf(LastApiKeyError);
      expect(repository.revokeKey).not.toHaveBeenCalled();
    });

    it('revokes a key when another active key remains', async () => {
      const key = newKey(region.id);
      repository.hasActiveKeyInRegion.mockResolvedValue(true);
      repository.countActiveKeys.mockResolvedValue(2);

      await sut.revokeKey(region.id, key.id);

      expect(repository.revokeKey).toHaveBeenCalledTimes(1);
      expect(repository.revokeKey).toHaveBeenCalledWith(manager, key.id, expect.any(Date));
    });

    it('locks the region row before counting its keys, in the transaction that revokes', async () => {
      const key = newKey(region.id);
      repository.hasActiveKeyInRegion.mockResolvedValue(true);
      repository.countActiveKeys.mockResolvedValue(2);

      await sut.revokeKey(region.id, key.id);

      expect(repository.lockRegion).toHaveBeenCalledWith(manager, region.id);
      expect(repository.countActiveKeys).toHaveBeenCalledWith(manager, region.id);
      expectCalledInOrder(repository.lockRegion, repository.countActiveKeys, repository.revokeKey);
    });

    // Unknown, already revoked and another region's keys are told apart only by the
    // repository's lookup (id, caller's region, not revoked): the e2e suite covers that
    // query. Here: whatever the reason the lookup finds nothing, the answer is the same.
    it('answers not-found, and revokes nothing, for a key that is not active in the caller\'s region', async () => {
      const keyId = randomUUID();
      repository.hasActiveKeyInRegion.mockResolvedValue(false);
      repository.countActiveKeys.mockResolvedValue(2);

      await expect(sut.revokeKey(region.id, keyId)).rejects.toBeInstanceOf(ApiKeyNotFoundError);
      expect(repository.hasActiveKeyInRegion).toHaveBeenCalledWith(manager, keyId, region.id);
      expect(repository.revokeKey).not.toHaveBeenCalled();
    });

    it('lets a key revoke itself when another remains', async () => {
      const secret = generateApiKey();
      const own = newKey(region.id);
      repository.findActiveKeyWithRegion.mockResolvedValue({ apiKeyId: own.id, lastUsedAt: new Date(), region, apiKeys: [own] });
      repository.hasActiveKeyInRegion.mockResolvedValue(true);
      repository.countActiveKeys.mockResolvedValue(2);

      const caller = await sut.authenticate(secret);
      expect(caller).toMatchObject({ regionId: region.id, apiKeyId: own.id });
      await sut.revokeKey(caller!.regionId, caller!.apiKeyId);

      expect(repository.revokeKey).toHaveBeenCalledWith(manager, own.id, expect.any(Date));
    });
  });

  describe('createKey: at most MAX_API_KEYS_PER_REGION active keys', () => {
    it.each([KEY_LIMIT, KEY_LIMIT + 1])('refuses with a 409 and inserts nothing when the region holds %i keys', async (active) => {
      repository.countActiveKeys.mockResolvedValue(active);

      const refusal = sut.createKey(region.id, null);

      await expect(refusal).rejects.toBeInstanceOf(ApiKeyLimitError);
      await expect(refusal).rejects.toMatchObject({ status: 409, slug: 'api-key-limit' });
      expect(repository.insertKey).not.toHaveBeenCalled();
    });

    it('inserts below the limit, storing only the hash of the secret it returns', async () => {
      repository.countActiveKeys.mockResolvedValue(KEY_LIMIT - 1);
      repository.insertKey.mockImplementation(async (_manager, key) => Object.assign(new ApiKey(), key));

      const issued = await sut.createKey(region.id, 'CI runner');

      expect(repository.insertKey).toHaveBeenCalledTimes(1);
      const [insertManager, inserted] = repository.insertKey.mock.calls[0];
      expect(insertManager).toBe(manager);
      expect(inserted).toMatchObject({ regionId: region.id, description: 'CI runner', tokenHash: hashApiKey(issued.key) });
      expect(Object.values(inserted)).not.toContain(issued.key);
    });

    it('locks the region row before counting its keys, in the transaction that inserts', async () => {
      repository.countActiveKeys.mockResolvedValue(0);

      await sut.createKey(region.id, null);

      expect(repository.countActiveKeys).toHaveBeenCalledWith(manager, region.id);
      expectCalledInOrder(repository.lockRegion, repository.countActiveKeys, repository.insertKey);
    });

    it('answers not-found for a region that does not exist', async () => {
      repository.lockRegion.mockResolvedValue(false);

      await expect(sut.createKey(region.id, null)).rejects.toBeInstanceOf(RegionNotFoundError);
      expect(repository.insertKey).not.toHaveBeenCalled();
    });
  });
});

import { randomUUID } from 'node:crypto';

import type { Clock } from '../../src/common/clock/clock';
import type { AppConfig } from '../../src/config/app-config';
import { generateApiKey, hashApiKey } from '../../src/region-keys/api-key-codec';
import { ApiKey } from '../../src/region-keys/entities/api-key.entity';
import { Region } from '../../src/region-keys/entities/region.entity';
import { RegionEventsRepository } from '../../src/region-keys/region-events.repository';
import {
  ApiKeyAlreadyRolledError,
  ApiKeyLimitError,
  ApiKeyNotFoundError,
  LastApiKeyError,
  RateLimitAboveCallerError,
  RegionNotFoundError,
} from '../../src/region-keys/region-keys.errors';
import { type ApiKeyRecord, RegionKeysRepository } from '../../src/region-keys/region-keys.repository';
import { RegionKeysService } from '../../src/region-keys/region-keys.service';
import type { RegionKeysSettings } from '../../src/region-keys/region-keys.settings';
import { type ChangeOrigin } from '../../src/region-keys/region-keys.types';
import { automock, expectCalledInOrder, fakeUnitOfWork } from '../support/service-mocks';

const KEY_LIMIT = 3;
const NOW = new Date('2026-11-22T10:15:00.000Z');

function newRegionKeysServiceTest() {
  const repository = automock(RegionKeysRepository);
  const events = automock(RegionEventsRepository);
  const { unitOfWork, transaction } = fakeUnitOfWork();
  const settings = {
    MAX_API_KEYS_PER_REGION: KEY_LIMIT,
    API_KEY_LAST_USED_RESOLUTION_SECONDS: 60,
    API_KEY_MAX_LIFETIME_DAYS: 366,
    regionKeyRateLimit: { requests: 600, perSeconds: 60 },
  } as RegionKeysSettings;
  const clock = { now: jest.fn(() => new Date(NOW)).mockName('clock.now') } satisfies Clock;
  return {
    sut: new RegionKeysService(unitOfWork, repository, events, {} as AppConfig, settings, clock),
    repository,
    events,
    clock,
    tx: transaction,
  };
}

const newRegion = (): Region => Object.assign(new Region(), { id: randomUUID(), name: 'North' });

/** A key row as the repository answers it: the entity's columns, its rate limit as one value. */
type KeyRow = ApiKey & ApiKeyRecord;

const newKey = (regionId: string, revokesAt: Date | null = null): KeyRow =>
  Object.assign(new ApiKey(), {
    id: randomUUID(),
    regionId,
    description: 'old',
    tokenPreview: 'rk_abcde\u2026wxyz',
    createdAt: NOW,
    updatedAt: NOW,
    lastUsedAt: null,
    revokedAt: null,
    revokesAt,
    expiresAt: null,
    permissions: ['region:read', 'keys:write'],
    allowedCidrs: null,
    rateLimit: null,
  });

const callerOf = (key: KeyRow): ChangeOrigin => ({
  actor: { type: 'api_key', apiKeyId: key.id, tokenPreview: key.tokenPreview },
  clientAddress: '203.0.113.7',
  requestId: 'req-1',
});

describe(RegionKeysService.name, () => {
  let sut: RegionKeysService;
  let repository: jest.Mocked<RegionKeysRepository>;
  let events: jest.Mocked<RegionEventsRepository>;
  let clock: { now: jest.Mock<Date, []> };
  let tx: unknown;
  let region: Region;
  let caller: KeyRow;

  beforeEach(() => {
    ({ sut, repository, events, clock, tx } = newRegionKeysServiceTest());
    region = newRegion();
    caller = newKey(region.id);
    repository.lockRegion.mockResolvedValue(region);
    repository.insertKey.mockImplementation(async (_tx, key) => Object.assign(new ApiKey(), key, { revokesAt: null }));
  });

  describe('revokeKey: a region keeps at least one key that is not scheduled to stop', () => {
    it('refuses to revoke the only permanent key, and revokes nothing and records nothing', async () => {
      const only = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(only);
      repository.countPermanentManagers.mockResolvedValue(1);

      await expect(sut.revokeKey(region.id, only.id, callerOf(only))).rejects.toBeInstanceOf(LastApiKeyError);
      expect(repository.revokeKey).not.toHaveBeenCalled();
      expect(events.insert).not.toHaveBeenCalled();
    });

    it('refuses to revoke the last permanent key even when keys about to stop remain', async () => {
      // The region has two active keys: this one, and a rolled one that stops in an hour.
      const permanent = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(permanent);
      repository.countActiveKeys.mockResolvedValue(2);
      repository.countPermanentManagers.mockResolvedValue(1);

      await expect(sut.revokeKey(region.id, permanent.id, callerOf(permanent))).rejects.toBeInstanceOf(LastApiKeyError);
      expect(repository.revokeKey).not.toHaveBeenCalled();
    });

    it('revokes a key scheduled to stop while a permanent key remains', async () => {
      const rolled = newKey(region.id, new Date(NOW.getTime() + 3600_000));
      repository.findActiveKeyInRegion.mockResolvedValue(rolled);
      repository.countPermanentManagers.mockResolvedValue(1);

      await sut.revokeKey(region.id, rolled.id, callerOf(caller));

      expect(repository.revokeKey).toHaveBeenCalledWith(tx, rolled.id, NOW);
    });

    it('revokes a key when another permanent key remains, and records it with the caller in the same transaction', async () => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      repository.countPermanentManagers.mockResolvedValue(2);

      await sut.revokeKey(region.id, key.id, callerOf(caller));

      expect(repository.revokeKey).toHaveBeenCalledTimes(1);
      expect(repository.revokeKey).toHaveBeenCalledWith(tx, key.id, NOW);
      expect(events.insert).toHaveBeenCalledWith(tx, [
        {
          id: expect.any(String),
          regionId: region.id,
          type: 'api_key.revoked',
          occurredAt: NOW,
          apiKey: { id: key.id, tokenPreview: key.tokenPreview },
          ...callerOf(caller),
        },
      ]);
    });

    it('locks the region row before counting its keys, in the transaction that revokes', async () => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      repository.countPermanentManagers.mockResolvedValue(2);

      await sut.revokeKey(region.id, key.id, callerOf(caller));

      expect(repository.lockRegion).toHaveBeenCalledWith(tx, region.id);
      expect(repository.countPermanentManagers).toHaveBeenCalledWith(tx, region.id);
      expectCalledInOrder(repository.lockRegion, repository.countPermanentManagers, repository.revokeKey);
    });

    // Unknown, already revoked, past its revokesAt and another region's keys are told apart
    // only by the repository's lookup (id, caller's region, active at the clock's time): the
    // e2e suite covers that query. Here: whatever the reason the lookup finds nothing, the
    // answer is the same.
    it("answers not-found, and revokes nothing, for a key that is not active in the caller's region", async () => {
      const keyId = randomUUID();
      repository.findActiveKeyInRegion.mockResolvedValue(null);
      repository.countPermanentManagers.mockResolvedValue(2);

      await expect(sut.revokeKey(region.id, keyId, callerOf(caller))).rejects.toBeInstanceOf(ApiKeyNotFoundError);
      expect(repository.findActiveKeyInRegion).toHaveBeenCalledWith(tx, keyId, region.id, NOW);
      expect(repository.revokeKey).not.toHaveBeenCalled();
      expect(events.insert).not.toHaveBeenCalled();
    });

    it('lets a key revoke itself when another remains', async () => {
      const secret = generateApiKey();
      const own = newKey(region.id);
      repository.findActiveKeyWithRegion.mockResolvedValue({
        apiKeyId: own.id,
        tokenPreview: own.tokenPreview,
        lastUsedAt: new Date(),
        permissions: own.permissions,
        allowedCidrs: null,
        rateLimit: null,
        region,
        apiKeys: [own],
      });
      repository.findActiveKeyInRegion.mockResolvedValue(own);
      repository.countPermanentManagers.mockResolvedValue(2);

      const principal = await sut.authenticate(secret, '203.0.113.7');
      expect(principal).toMatchObject({ regionId: region.id, apiKeyId: own.id });
      await sut.revokeKey(principal!.regionId, principal!.apiKeyId, callerOf(own));

      expect(repository.revokeKey).toHaveBeenCalledWith(tx, own.id, NOW);
    });
  });

  describe('authenticate', () => {
    it("looks the key up at the clock's time, so a key past its revokesAt is refused", async () => {
      repository.findActiveKeyWithRegion.mockResolvedValue(null);
      const secret = generateApiKey();

      await expect(sut.authenticate(secret, '203.0.113.7')).resolves.toBeNull();
      expect(repository.findActiveKeyWithRegion).toHaveBeenCalledWith(hashApiKey(secret), NOW);
    });
  });

  describe('rollKey', () => {
    const roll = (key: KeyRow, revokeOldAfterSeconds: number, description?: string | null) =>
      sut.rollKey(region.id, key.id, { description, revokeOldAfterSeconds }, callerOf(caller));

    it('schedules the old key to stop after the given time and issues a permanent key with its description', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);

      const rolled = await roll(old, 3600);

      const revokesAt = new Date(NOW.getTime() + 3600_000);
      expect(rolled.replaces).toEqual({ id: old.id, revokesAt });
      expect(repository.scheduleRevocation).toHaveBeenCalledWith(tx, old.id, revokesAt, null, NOW);
      expect(repository.insertKey).toHaveBeenCalledWith(
        tx,
        expect.objectContaining({ description: 'old', tokenHash: hashApiKey(rolled.key) }),
      );
      expectCalledInOrder(
        repository.lockRegion,
        repository.findActiveKeyInRegion,
        repository.scheduleRevocation,
        events.insert,
      );
    });

    it('records the roll on the old key (with its revokesAt and replacement) and the creation of the new key (with the key it replaces), in the same transaction', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);

      const rolled = await roll(old, 60);

      expect(events.insert).toHaveBeenCalledTimes(1);
      const [insertTx, recorded] = events.insert.mock.calls[0];
      expect(insertTx).toBe(tx);
      expect(recorded.map(({ type, apiKey, actor }) => ({ type, apiKey, actor }))).toEqual([
        {
          type: 'api_key.rolled',
          apiKey: {
            id: old.id,
            tokenPreview: old.tokenPreview,
            revokesAt: new Date(NOW.getTime() + 60_000),
            grant: { permissions: old.permissions, allowedCidrs: null, rateLimit: null },
            replacedBy: { id: rolled.apiKey.id, tokenPreview: rolled.apiKey.tokenPreview },
          },
          actor: callerOf(caller).actor,
        },
        {
          type: 'api_key.created',
          apiKey: {
            id: rolled.apiKey.id,
            tokenPreview: rolled.apiKey.tokenPreview,
            grant: { permissions: ['region:read', 'keys:write'], allowedCidrs: null, rateLimit: null },
            replaces: { id: old.id },
          },
          actor: callerOf(caller).actor,
        },
      ]);
    });

    it('reads the time once the region lock is held, so a change that waited goes by the time it is made', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);

      await roll(old, 60);

      expectCalledInOrder(repository.lockRegion, clock.now, repository.findActiveKeyInRegion);
    });

    it('revokes the old key at once with 0 seconds', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);

      const rolled = await roll(old, 0, null);

      expect(rolled.replaces.revokesAt).toEqual(NOW);
      expect(repository.scheduleRevocation).toHaveBeenCalledWith(tx, old.id, NOW, NOW, NOW);
      expect(repository.insertKey).toHaveBeenCalledWith(tx, expect.objectContaining({ description: null }));
    });

    it('refuses with a 409, changing nothing, to roll a key already scheduled to stop', async () => {
      const rolledBefore = newKey(region.id, new Date(NOW.getTime() + 60_000));
      repository.findActiveKeyInRegion.mockResolvedValue(rolledBefore);
      repository.countActiveKeys.mockResolvedValue(2);

      await expect(roll(rolledBefore, 60)).rejects.toBeInstanceOf(ApiKeyAlreadyRolledError);
      expect(repository.scheduleRevocation).not.toHaveBeenCalled();
      expect(repository.insertKey).not.toHaveBeenCalled();
      expect(events.insert).not.toHaveBeenCalled();
    });

    it('counts the new key against the limit while the old one still works', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(KEY_LIMIT);

      await expect(roll(old, 60)).rejects.toBeInstanceOf(ApiKeyLimitError);
      expect(repository.scheduleRevocation).not.toHaveBeenCalled();
      expect(repository.insertKey).not.toHaveBeenCalled();
    });

    it('allows a roll at the limit when the old key stops at once (the number of keys stays the same)', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(KEY_LIMIT);

      await roll(old, 0);
      expect(repository.insertKey).toHaveBeenCalledTimes(1);
    });

    it("keeps the old key's permissions and allowlist when none are asked for, not the caller's", async () => {
      const old = Object.assign(newKey(region.id), { permissions: ['region:read'], allowedCidrs: ['192.0.2.0/24'] });
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);

      await sut.rollKey(region.id, old.id, { revokeOldAfterSeconds: 60 }, callerOf(caller), {
        permissions: ['region:read', 'keys:write'],
      });

      expect(repository.insertKey).toHaveBeenCalledWith(
        tx,
        expect.objectContaining({ permissions: ['region:read'], allowedCidrs: ['192.0.2.0/24'] }),
      );
    });

    it('refuses with 403, changing nothing, to keep permissions of the old key that the caller lacks', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);

      const rolling = sut.rollKey(region.id, old.id, { revokeOldAfterSeconds: 60 }, callerOf(caller), {
        permissions: ['keys:write'],
      });

      await expect(rolling).rejects.toMatchObject({ status: 403, message: expect.stringContaining('region:read') });
      expect(repository.scheduleRevocation).not.toHaveBeenCalled();
      expect(repository.insertKey).not.toHaveBeenCalled();
    });

    it('refuses to roll the last permanent manager into a key whose allowlist admits no address', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);
      repository.countPermanentManagers.mockResolvedValue(1);

      const rolling = sut.rollKey(region.id, old.id, { revokeOldAfterSeconds: 0, allowedCidrs: [] }, callerOf(caller));

      await expect(rolling).rejects.toBeInstanceOf(LastApiKeyError);
      expect(repository.insertKey).not.toHaveBeenCalled();
    });

    it('stores each network of the allowlist once', async () => {
      const old = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      repository.countActiveKeys.mockResolvedValue(1);
      const allowedCidrs = ['127.0.0.1/32', '10.0.0.0/8', '127.0.0.1/32'];

      await sut.rollKey(region.id, old.id, { revokeOldAfterSeconds: 60, allowedCidrs }, callerOf(caller));

      expect(repository.insertKey).toHaveBeenCalledWith(
        tx,
        expect.objectContaining({ allowedCidrs: ['127.0.0.1/32', '10.0.0.0/8'] }),
      );
    });

    it("answers not-found for a key that is not active in the caller's region", async () => {
      repository.findActiveKeyInRegion.mockResolvedValue(null);

      await expect(roll(newKey(region.id), 60)).rejects.toBeInstanceOf(ApiKeyNotFoundError);
      expect(repository.insertKey).not.toHaveBeenCalled();
      expect(events.insert).not.toHaveBeenCalled();
    });
  });

  describe('createKey: at most MAX_API_KEYS_PER_REGION active keys', () => {
    it.each([KEY_LIMIT, KEY_LIMIT + 1])(
      'refuses with a 409 and inserts nothing when the region holds %i keys',
      async (active) => {
        repository.countActiveKeys.mockResolvedValue(active);

        const refusal = sut.createKey(region.id, {}, callerOf(caller));

        await expect(refusal).rejects.toBeInstanceOf(ApiKeyLimitError);
        await expect(refusal).rejects.toMatchObject({ status: 409, slug: 'api-key-limit' });
        expect(repository.insertKey).not.toHaveBeenCalled();
        expect(events.insert).not.toHaveBeenCalled();
      },
    );

    it('inserts below the limit, storing only the hash of the secret it returns, and records it', async () => {
      repository.countActiveKeys.mockResolvedValue(KEY_LIMIT - 1);

      const issued = await sut.createKey(region.id, { description: 'CI runner' }, callerOf(caller));

      expect(repository.insertKey).toHaveBeenCalledTimes(1);
      const [insertTx, inserted] = repository.insertKey.mock.calls[0];
      expect(insertTx).toBe(tx);
      expect(inserted).toMatchObject({
        regionId: region.id,
        description: 'CI runner',
        tokenHash: hashApiKey(issued.key),
      });
      expect(Object.values(inserted)).not.toContain(issued.key);
      expect(events.insert).toHaveBeenCalledWith(tx, [
        expect.objectContaining({
          type: 'api_key.created',
          apiKey: expect.objectContaining({ id: issued.apiKey.id, tokenPreview: issued.apiKey.tokenPreview }),
        }),
      ]);
    });

    it('locks the region row before counting its keys, in the transaction that inserts', async () => {
      repository.countActiveKeys.mockResolvedValue(0);

      await sut.createKey(region.id, {}, callerOf(caller));

      expect(repository.countActiveKeys).toHaveBeenCalledWith(tx, region.id, NOW);
      expectCalledInOrder(repository.lockRegion, repository.countActiveKeys, repository.insertKey);
    });

    it('answers not-found for a region that does not exist', async () => {
      repository.lockRegion.mockResolvedValue(null);

      await expect(sut.createKey(region.id, {}, callerOf(caller))).rejects.toBeInstanceOf(RegionNotFoundError);
      expect(repository.insertKey).not.toHaveBeenCalled();
    });
  });

  describe('listEvents', () => {
    const event = (second: number) => ({
      id: randomUUID(),
      seq: String(100 - second),
      type: 'api_key.created' as const,
      occurredAt: new Date(NOW.getTime() - second * 1000),
      actor: { type: 'operator' as const },
      apiKey: { id: randomUUID(), tokenPreview: 'rk_abcde\u2026wxyz' },
      clientAddress: null,
      requestId: null,
    });

    it('asks for one more than the limit, and hands out a cursor that resumes after the last event returned', async () => {
      const rows = [event(1), event(2), event(3)];
      events.listByRegion.mockResolvedValueOnce(rows);

      const page = await sut.listEvents(region.id, 2);

      expect(events.listByRegion).toHaveBeenCalledWith(region.id, 3, null);
      expect(page.events).toEqual(rows.slice(0, 2));
      events.listByRegion.mockResolvedValueOnce([rows[2]]);
      events.findPosition.mockResolvedValueOnce({ occurredAt: rows[1].occurredAt, seq: rows[1].seq });
      const next = await sut.listEvents(region.id, 2, page.next!);
      // The cursor names the last event by its id, looked up in the caller's region only.
      expect(events.findPosition).toHaveBeenCalledWith(region.id, rows[1].id);
      expect(events.listByRegion).toHaveBeenLastCalledWith(region.id, 3, {
        occurredAt: rows[1].occurredAt,
        seq: rows[1].seq,
      });
      expect(next).toEqual({ events: [rows[2]], next: null });
    });

    it('refuses a well-formed cursor that names no event of the region with a 400 naming the cursor', async () => {
      events.findPosition.mockResolvedValueOnce(null);
      const cursor = Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
      await expect(sut.listEvents(region.id, 2, cursor)).rejects.toMatchObject({
        status: 400,
        errors: [{ field: 'cursor' }],
      });
      expect(events.listByRegion).not.toHaveBeenCalled();
    });

    it.each(['nonsense', Buffer.from('2026-11-22T10:15:00.000Z 0').toString('base64url'), ''])(
      'refuses a cursor it did not hand out (%j) with a 400 naming the cursor',
      async (cursor) => {
        await expect(sut.listEvents(region.id, 2, cursor)).rejects.toMatchObject({
          status: 400,
          errors: [{ field: 'cursor' }],
        });
        expect(events.findPosition).not.toHaveBeenCalled();
        expect(events.listByRegion).not.toHaveBeenCalled();
      },
    );
  });

  describe('updateKey', () => {
    const update = (key: KeyRow, patch: object, ifMatch?: string) =>
      sut.updateKey(region.id, key.id, patch, { ifMatch }, callerOf(caller));

    beforeEach(() => {
      repository.updateKey.mockImplementation(async (_tx, id, changes) =>
        Object.assign(newKey(region.id), { id }, changes as Partial<KeyRow>),
      );
    });

    it('writes and records only the fields that change, under the region lock', async () => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      const expiresAt = new Date(NOW.getTime() + 3_600_000);

      await update(key, { description: 'old', permissions: ['region:read'], expiresAt: expiresAt.toISOString() });

      repository.countPermanentManagers.mockResolvedValue(2);
      expect(repository.updateKey).toHaveBeenCalledWith(tx, key.id, { permissions: ['region:read'], expiresAt }, NOW);
      const [[, [event]]] = events.insert.mock.calls;
      expect(event).toMatchObject({
        type: 'api_key.updated',
        apiKey: { id: key.id, expiresAt },
        changes: { permissions: ['region:read'], expiresAt: expiresAt.toISOString() },
      });
      expectCalledInOrder(repository.lockRegion, repository.findActiveKeyInRegion, repository.updateKey, events.insert);
    });

    it('writes nothing and records nothing for a patch that changes nothing', async () => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      expect(await update(key, { description: 'old', allowedCidrs: null, expiresAt: null })).toBe(key);
      expect(repository.updateKey).not.toHaveBeenCalled();
      expect(events.insert).not.toHaveBeenCalled();
    });

    it.each([
      ['loses keys:write', { permissions: ['region:read'] }],
      ['gets an expiry', { expiresAt: new Date(NOW.getTime() + 3_600_000).toISOString() }],
    ])('refuses the only permanent manager a change by which it %s', async (_name, patch) => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      repository.countPermanentManagers.mockResolvedValue(1);
      await expect(update(key, patch)).rejects.toBeInstanceOf(LastApiKeyError);
      expect(repository.updateKey).not.toHaveBeenCalled();
    });

    it('refuses a stale If-Match with 412 before changing anything', async () => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      await expect(update(key, { description: 'new' }, '"stale"')).rejects.toMatchObject({ status: 412 });
      expect(repository.updateKey).not.toHaveBeenCalled();
    });

    it.each([
      [59_000, false],
      [60_000, true],
      [366 * 86_400_000, true],
      [366 * 86_400_000 + 1, false],
    ])('takes an expiresAt %d ms ahead: %s', async (ms, accepted) => {
      const key = newKey(region.id);
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      repository.countPermanentManagers.mockResolvedValue(2);
      const result = update(key, { expiresAt: new Date(NOW.getTime() + ms).toISOString() });
      if (accepted) await expect(result).resolves.toBeDefined();
      else await expect(result).rejects.toMatchObject({ status: 400, errors: [{ field: 'expiresAt' }] });
    });
  });

  describe('rate limits: a key never grants a faster rate than its own', () => {
    const held = (rateLimit: { requests: number; perSeconds: number } | null) => ({
      permissions: ['region:read', 'keys:write'] as const,
      rateLimit,
    });

    beforeEach(() => {
      repository.countActiveKeys.mockResolvedValue(1);
    });

    it("gives a new key the caller's own by default, null (the region default) included, and an operator's none", async () => {
      await sut.createKey(region.id, {}, callerOf(caller), held({ requests: 5, perSeconds: 1 }));
      await sut.createKey(region.id, {}, callerOf(caller), held(null));
      await sut.createKey(region.id, {}, callerOf(caller));
      const given = repository.insertKey.mock.calls.map(([, key]) => key.rateLimit);
      expect(given).toEqual([{ requests: 5, perSeconds: 1 }, null, null]);
    });

    it('compares requests / perSeconds exactly, and refuses a faster one before locking anything', async () => {
      const own = held({ requests: 1, perSeconds: 3 });
      await sut.createKey(region.id, { rateLimit: { requests: 1200, perSeconds: 3600 } }, callerOf(caller), own);
      const faster = sut.createKey(
        region.id,
        { rateLimit: { requests: 1201, perSeconds: 3600 } },
        callerOf(caller),
        own,
      );
      await expect(faster).rejects.toBeInstanceOf(RateLimitAboveCallerError);
      // Null is the region default, 10 a second.
      await expect(sut.createKey(region.id, { rateLimit: null }, callerOf(caller), own)).rejects.toBeInstanceOf(
        RateLimitAboveCallerError,
      );
      expect(repository.lockRegion).toHaveBeenCalledTimes(1);
      // An operator holds every rate.
      await sut.createKey(region.id, { rateLimit: { requests: 100000, perSeconds: 1 } }, callerOf(caller));
    });

    it("refuses a roll that keeps an old key's faster limit, and keeps a slower one", async () => {
      const old = Object.assign(newKey(region.id), { rateLimit: { requests: 11, perSeconds: 1 } });
      repository.findActiveKeyInRegion.mockResolvedValue(old);
      const roll = (rateLimit?: { requests: number; perSeconds: number } | null) =>
        sut.rollKey(region.id, old.id, { revokeOldAfterSeconds: 60, rateLimit }, callerOf(caller), held(null));
      await expect(roll()).rejects.toMatchObject({ message: expect.stringMatching(/^A roll keeps the old key's/) });
      expect(repository.insertKey).not.toHaveBeenCalled();
      await roll({ requests: 10, perSeconds: 1 });
      expect(repository.insertKey).toHaveBeenCalledWith(
        tx,
        expect.objectContaining({ rateLimit: { requests: 10, perSeconds: 1 } }),
      );
    });

    it('writes a PATCH of the limit only when it changes it', async () => {
      const key = Object.assign(newKey(region.id), { rateLimit: { requests: 5, perSeconds: 1 } });
      repository.findActiveKeyInRegion.mockResolvedValue(key);
      await sut.updateKey(
        region.id,
        key.id,
        { rateLimit: { requests: 5, perSeconds: 1 } },
        {},
        callerOf(caller),
        held(null),
      );
      expect(repository.updateKey).not.toHaveBeenCalled();
      repository.updateKey.mockResolvedValue({ ...key, rateLimit: null });
      await sut.updateKey(region.id, key.id, { rateLimit: null }, {}, callerOf(caller), held(null));
      expect(repository.updateKey).toHaveBeenCalledWith(tx, key.id, { rateLimit: null }, NOW);
    });
  });
});

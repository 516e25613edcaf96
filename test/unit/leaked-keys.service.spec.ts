import { randomUUID } from 'node:crypto';

import { Logger } from '@nestjs/common';

import type { Clock } from '../../src/common/clock/clock';
import { NoSecurityCounters, type SecurityCounters } from '../../src/common/metrics/security-counters';
import type { AppConfig } from '../../src/config/app-config';
import { generateApiKey, hashApiKey } from '../../src/region-keys/api-key-codec';
import { LeakedKeysService } from '../../src/region-keys/leaked-keys.service';
import { RegionEventsRepository } from '../../src/region-keys/region-events.repository';
import type { ApiKeyRecord } from '../../src/region-keys/region-keys.repository';
import { RegionKeysRepository } from '../../src/region-keys/region-keys.repository';
import { RegionKeysService } from '../../src/region-keys/region-keys.service';
import type { RegionKeysSettings } from '../../src/region-keys/region-keys.settings';
import type { ChangeOrigin } from '../../src/region-keys/region-keys.types';
import { automock, expectCalledInOrder, fakeUnitOfWork } from '../support/service-mocks';

const NOW = new Date('2026-11-22T10:15:00.000Z');
const FLOOR_MS = 500;
const REPORTER: ChangeOrigin = { actor: { type: 'reporter' }, clientAddress: '203.0.113.7', requestId: 'req-1' };
const clock = { now: () => new Date(NOW) } satisfies Clock;

describe(LeakedKeysService.name, () => {
  let sut: LeakedKeysService;
  let repository: jest.Mocked<RegionKeysRepository>;
  let regionKeys: jest.Mocked<RegionKeysService>;
  let counters: SecurityCounters;

  beforeEach(() => {
    jest.useFakeTimers();
    repository = automock(RegionKeysRepository);
    regionKeys = automock(RegionKeysService);
    counters = new NoSecurityCounters();
    const settings = { LEAK_REPORT_MIN_ANSWER_MS: FLOOR_MS } as RegionKeysSettings;
    const config = { API_ENVIRONMENT: 'live' } as AppConfig;
    sut = new LeakedKeysService(repository, regionKeys, config, settings, clock, counters);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** Starts a report; `answered()` says whether its answer is ready yet. */
  function start(keys: string[]) {
    let answered = false;
    const answer = sut.report(keys, REPORTER).then((received) => {
      answered = true;
      return received;
    });
    return { answer, answered: () => answered };
  }

  // The timing half of "no oracle", without measuring time: whatever the keys, the answer is
  // ready only when the floor ends, and the work of a real key is done before that.
  it.each([
    ['unknown keys', false],
    ['a real key', true],
  ])('answers a batch of %s only when the floor ends, its work done well before', async (_, real) => {
    const [keyId, regionId] = [randomUUID(), randomUUID()];
    repository.findActiveKeysByHashes.mockResolvedValue(real ? [{ id: keyId, regionId }] : []);
    regionKeys.settleLeakReports.mockResolvedValue([{ keyId, regionId, outcome: 'revoked' }]);
    const report = start([generateApiKey(), generateApiKey(), 'not a key']);

    await jest.advanceTimersByTimeAsync(FLOOR_MS - 1);
    expect(repository.findActiveKeysByHashes).toHaveBeenCalledTimes(1);
    expect(regionKeys.settleLeakReports).toHaveBeenCalledTimes(real ? 1 : 0);
    expect(report.answered()).toBe(false);

    await jest.advanceTimersByTimeAsync(1);
    expect(report.answered()).toBe(true);
    await expect(report.answer).resolves.toBe(3);
  });

  it('looks up, in one query, the hashes of the well-formed keys of its environment only, each once', async () => {
    repository.findActiveKeysByHashes.mockResolvedValue([]);
    const live = generateApiKey('live');
    // An operator's key (INITIAL_REGION_API_KEY) need not have a prefix: valid in both environments.
    const operators = 'o'.repeat(256);
    const report = start([live, generateApiKey('sandbox'), 'rk_short', live, operators, 'too short', ' '.repeat(40)]);
    await jest.advanceTimersByTimeAsync(FLOOR_MS);
    await expect(report.answer).resolves.toBe(7);
    expect(repository.findActiveKeysByHashes.mock.calls).toEqual([[[hashApiKey(live), hashApiKey(operators)], NOW]]);
  });

  it('settles the keys of each region in one call, region after region, and counts what became of each', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const [a1, a2, b1] = [randomUUID(), randomUUID(), randomUUID()];
    repository.findActiveKeysByHashes.mockResolvedValue([
      { id: a1, regionId: a },
      { id: a2, regionId: a },
      { id: b1, regionId: b },
    ]);
    regionKeys.settleLeakReports.mockImplementation(async (regionId, keyIds) =>
      keyIds.map((keyId) => ({ keyId, regionId, outcome: keyId === a2 ? 'flagged' : 'revoked' })),
    );
    const counted = jest.spyOn(counters, 'leakedKeyReported');
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const report = start(['k'.repeat(40), 'l'.repeat(40), 'm'.repeat(40)]);
    await jest.advanceTimersByTimeAsync(FLOOR_MS);
    await report.answer;

    expect(regionKeys.settleLeakReports.mock.calls).toEqual([
      [a, [a1, a2], REPORTER],
      [b, [b1], REPORTER],
    ]);
    expect(counted.mock.calls.map(([outcome]) => outcome).sort()).toEqual(['flagged', 'revoked', 'revoked']);
    expect(warned).toHaveBeenCalledTimes(1);
    expect(warned).toHaveBeenCalledWith(expect.stringContaining(`API key ${a2} of region ${a}`));
  });

  it('fails when the work fails, as any request on a database that does not answer', async () => {
    repository.findActiveKeysByHashes.mockRejectedValue(new Error('connection lost'));
    const report = start([generateApiKey()]);
    const failed = expect(report.answer).rejects.toThrow('connection lost');
    await jest.advanceTimersByTimeAsync(FLOOR_MS);
    await failed;
  });
});

describe(`${RegionKeysService.name}.settleLeakReports`, () => {
  const regionId = randomUUID();
  const keyOf = (id: string): ApiKeyRecord => ({
    id,
    description: null,
    tokenPreview: 'rk_abcde\u2026wxyz',
    createdAt: NOW,
    updatedAt: NOW,
    lastUsedAt: null,
    revokesAt: null,
    expiresAt: null,
    permissions: ['region:read', 'keys:write'],
    allowedCidrs: null,
    rateLimit: null,
    leakReportedAt: null,
  });

  function newTest(managers: number) {
    const repository = automock(RegionKeysRepository);
    const events = automock(RegionEventsRepository);
    const { unitOfWork, transaction } = fakeUnitOfWork();
    const sut = new RegionKeysService(unitOfWork, repository, events, {} as AppConfig, {} as RegionKeysSettings, clock);
    repository.lockRegion.mockResolvedValue({ id: regionId, name: 'North' });
    repository.findActiveKeyInRegion.mockImplementation(async (_tx, id) => (id === 'gone' ? null : keyOf(id)));
    let left = managers;
    repository.countPermanentManagers.mockImplementation(async () => left);
    repository.revokeKey.mockImplementation(async () => void left--);
    return { sut, repository, events, tx: transaction };
  }

  it('revokes each key under the region lock, with api_key.leak_reported and api_key.revoked by the reporter', async () => {
    const { sut, repository, events, tx } = newTest(3);
    const outcomes = await sut.settleLeakReports(regionId, ['k1', 'gone', 'k2'], REPORTER);
    expect(outcomes).toEqual([
      { keyId: 'k1', regionId, outcome: 'revoked' },
      { keyId: 'k2', regionId, outcome: 'revoked' },
    ]);
    expectCalledInOrder(repository.lockRegion, repository.findActiveKeyInRegion, repository.revokeKey);
    expect(repository.revokeKey.mock.calls).toEqual([
      [tx, 'k1', NOW],
      [tx, 'k2', NOW],
    ]);
    const recorded = events.insert.mock.calls.flatMap(([, rows]) => rows);
    expect(recorded.map((row) => [row.type, row.apiKey.id])).toEqual([
      ['api_key.leak_reported', 'k1'],
      ['api_key.revoked', 'k1'],
      ['api_key.leak_reported', 'k2'],
      ['api_key.revoked', 'k2'],
    ]);
    for (const row of recorded) expect(row).toMatchObject({ regionId, occurredAt: NOW, ...REPORTER });
    expect(repository.flagLeakReported).not.toHaveBeenCalled();
  });

  it('flags, and does not revoke, the key the last-key rule keeps, recording only api_key.leak_reported', async () => {
    const { sut, repository, events, tx } = newTest(2);
    const outcomes = await sut.settleLeakReports(regionId, ['k1', 'k2'], REPORTER);
    expect(outcomes.map(({ outcome }) => outcome)).toEqual(['revoked', 'flagged']);
    expect(repository.revokeKey.mock.calls).toEqual([[tx, 'k1', NOW]]);
    expect(repository.flagLeakReported.mock.calls).toEqual([[tx, 'k2', NOW]]);
    const recorded = events.insert.mock.calls.flatMap(([, rows]) => rows).map((row) => [row.type, row.apiKey.id]);
    expect(recorded).toEqual([
      ['api_key.leak_reported', 'k1'],
      ['api_key.revoked', 'k1'],
      ['api_key.leak_reported', 'k2'],
    ]);
  });
});

import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { expectProblem } from '../support/problems';
import { propertyRuns } from '../support/property-runs';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * A model of one region's keys, checked against two server instances on one PostgreSQL
 * database: fast-check generates sequences of creates, deletes, authentications and
 * concurrent batches, and after every step the service must agree with the model (status
 * codes, the key list, revoked keys refused on both instances, the region never keyless).
 * The embedded database serves one process only, so this runs in the PostgreSQL pass.
 *
 * The key limit is set low so that sequences reach it; it is the same rule as the
 * default 100, with a smaller number.
 */
const describeOnServer = usesPostgresServer() ? describe : describe.skip;
const KEY_LIMIT = 6;

interface KnownKey {
  id: string;
  key: string;
  description: string | null;
  createdAt: string;
}

/** What a client that saw every answer knows: the region's live keys and the ones it revoked. */
interface KeyModel {
  live: KnownKey[];
  revoked: KnownKey[];
}

interface Service {
  instances: [TestApp, TestApp];
  regionId: string;
}

/** A key id to delete: resolved against the model when the command runs. */
type Target =
  | { kind: 'live' | 'revoked'; index: number; fallbackId: string }
  | { kind: 'unknown'; fallbackId: string }
  | { kind: 'other-region' };

type BatchOp = { instance: 0 | 1; actor: number } & ({ action: 'create'; description?: string } | { action: 'delete'; target: Target });

let db: TestDatabase;
let a: TestApp;
let b: TestApp;
let otherRegion: RegionFixture;

const pick = <T>(list: T[], index: number): T => list[index % list.length];

const getRegion = (t: TestApp, key: string) => t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
const postKey = (t: TestApp, key: string, description?: string) =>
  t.request({ method: 'POST', url: '/auth/region/api-keys', headers: { 'x-api-key': key }, payload: description === undefined ? {} : { description } });
const deleteKey = (t: TestApp, key: string, id: string) =>
  t.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } });

function targetId(m: KeyModel, target: Target): string {
  switch (target.kind) {
    case 'other-region':
      return otherRegion.keyId;
    case 'unknown':
      return target.fallbackId;
    default: {
      const list = target.kind === 'live' ? m.live : m.revoked;
      return list.length > 0 ? pick(list, target.index).id : target.fallbackId;
    }
  }
}

const describeTarget = (target: Target) =>
  target.kind === 'live' || target.kind === 'revoked' ? `${target.kind}#${target.index}` : target.kind;

function expectCreated(body: Record<string, unknown>, description: string | undefined): KnownKey {
  expect(body).toMatchObject({ description: description ?? null, key: expect.stringMatching(/^rk_[0-9A-Za-z]{49}$/) });
  return { id: String(body.id), key: String(body.key), description: description ?? null, createdAt: String(body.createdAt) };
}

/** Revoked keys are refused at once, on every instance named. */
async function expectRefused(instances: TestApp[], revoked: KnownKey[]): Promise<void> {
  for (const key of revoked) {
    for (const t of instances) {
      const res = await getRegion(t, key.key);
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    }
  }
}

/** The service's view of the region, through both instances and in the table, equals the model's. */
async function expectAgreement(m: KeyModel, r: Service): Promise<void> {
  expect(m.live.length).toBeGreaterThanOrEqual(1);
  const expected = [...m.live].map(({ id, description, createdAt }) => ({ id, description, createdAt })).sort((x, y) => x.id.localeCompare(y.id));
  // The oldest key reads through one instance and the newest through the other.
  for (const [t, viewer] of [
    [r.instances[0], m.live[0]],
    [r.instances[1], m.live[m.live.length - 1]],
  ] as const) {
    const res = await getRegion(t, viewer.key);
    expect(res.statusCode).toBe(200);
    const region = res.json() as { id: string; apiKeys: { id: string; description: string | null; createdAt: string }[] };
    expect(region.id).toBe(r.regionId);
    const listed = region.apiKeys.map(({ id, description, createdAt }) => ({ id, description, createdAt }));
    expect([...listed].sort((x, y) => x.id.localeCompare(y.id))).toEqual(expected);
    // Oldest first: keys made in one concurrent batch may share a millisecond, so this is
    // checked on the timestamps rather than on the model's order.
    const times = listed.map((k) => Date.parse(k.createdAt));
    expect(times).toEqual([...times].sort((x, y) => x - y));
  }
  const [rows] = await r.instances[0].app
    .get(DataSource)
    .query(
      'SELECT count(*) FILTER (WHERE revoked_at IS NULL)::int AS live, count(*) FILTER (WHERE revoked_at IS NOT NULL)::int AS revoked FROM api_keys WHERE region_id = $1',
      [r.regionId],
    );
  expect(rows).toEqual({ live: m.live.length, revoked: m.revoked.length });
}

class CreateKey implements fc.AsyncCommand<KeyModel, Service> {
  constructor(
    readonly instance: 0 | 1,
    readonly actor: number,
    readonly description: string | undefined,
  ) {}
  check = () => true;
  async run(m: KeyModel, r: Service): Promise<void> {
    const res = await postKey(r.instances[this.instance], pick(m.live, this.actor).key, this.description);
    if (m.live.length < KEY_LIMIT) {
      expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
      m.live.push(expectCreated(res.json(), this.description));
    } else {
      expectProblem(res, 409, 'api-key-limit');
    }
    await expectAgreement(m, r);
  }
  toString = () => `create(on ${'ab'[this.instance]}, by live#${this.actor}, ${JSON.stringify(this.description)})`;
}

class DeleteKey implements fc.AsyncCommand<KeyModel, Service> {
  constructor(
    readonly instance: 0 | 1,
    readonly actor: number,
    readonly target: Target,
  ) {}
  check = (m: Readonly<KeyModel>) => this.target.kind !== 'revoked' || m.revoked.length > 0;
  async run(m: KeyModel, r: Service): Promise<void> {
    const id = targetId(m, this.target);
    const res = await deleteKey(r.instances[this.instance], pick(m.live, this.actor).key, id);
    const victim = m.live.findIndex((k) => k.id === id);
    if (victim < 0) {
      // Unknown, revoked and other regions' keys get the same answer.
      expectProblem(res, 404, 'not-found');
    } else if (m.live.length === 1) {
      expectProblem(res, 409, 'last-api-key');
    } else {
      expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 204, body: '' });
      const [revoked] = m.live.splice(victim, 1);
      m.revoked.push(revoked);
      await expectRefused(r.instances, [revoked]);
    }
    await expectAgreement(m, r);
  }
  toString = () => `delete(on ${'ab'[this.instance]}, by live#${this.actor}, ${describeTarget(this.target)})`;
}

class Authenticate implements fc.AsyncCommand<KeyModel, Service> {
  constructor(
    readonly instance: 0 | 1,
    readonly which: 'live' | 'revoked',
    readonly index: number,
  ) {}
  check = (m: Readonly<KeyModel>) => this.which === 'live' || m.revoked.length > 0;
  async run(m: KeyModel, r: Service): Promise<void> {
    const t = r.instances[this.instance];
    if (this.which === 'revoked') {
      await expectRefused([t], [pick(m.revoked, this.index)]);
      return;
    }
    const res = await getRegion(t, pick(m.live, this.index).key);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(r.regionId);
  }
  toString = () => `authenticate(on ${'ab'[this.instance]}, ${this.which}#${this.index})`;
}

interface ResolvedOp {
  op: BatchOp;
  actor: KnownKey;
  targetId?: string;
}

/**
 * Whether the statuses of a concurrent batch are what some one-at-a-time order of its
 * requests would give (each change locks the region row, so they do run one at a time).
 * A 401 is allowed only for a request whose key another request of the batch revoked: it
 * may be checked before or after that revocation commits.
 */
function explainBatch(live: KnownKey[], ops: ResolvedOp[], statuses: number[]): boolean {
  const revokedHere = new Set(ops.filter((o, i) => o.op.action === 'delete' && statuses[i] === 204).map((o) => o.targetId));
  if (ops.some((o, i) => statuses[i] === 401 && !revokedHere.has(o.actor.id))) return false;
  const pending = ops.map((_, i) => i).filter((i) => statuses[i] !== 401);
  const search = (liveIds: Set<string>, left: number[]): boolean =>
    left.length === 0 ||
    left.some((i) => {
      const o = ops[i];
      const next = new Set(liveIds);
      let status: number;
      if (o.op.action === 'create') {
        status = liveIds.size < KEY_LIMIT ? 201 : 409;
        if (status === 201) next.add(`new-${i}`);
      } else if (!liveIds.has(o.targetId!)) {
        status = 404;
      } else {
        status = liveIds.size > 1 ? 204 : 409;
        if (status === 204) next.delete(o.targetId!);
      }
      return status === statuses[i] && search(next, left.filter((j) => j !== i));
    });
  return search(new Set(live.map((k) => k.id)), pending);
}

class ConcurrentBatch implements fc.AsyncCommand<KeyModel, Service> {
  constructor(readonly ops: BatchOp[]) {}
  check = () => true;
  async run(m: KeyModel, r: Service): Promise<void> {
    const resolved: ResolvedOp[] = this.ops.map((op) => ({
      op,
      actor: pick(m.live, op.actor),
      targetId: op.action === 'delete' ? targetId(m, op.target) : undefined,
    }));
    const responses = await Promise.all(
      resolved.map(({ op, actor, targetId }) => {
        const t = r.instances[op.instance];
        return op.action === 'create' ? postKey(t, actor.key, op.description) : deleteKey(t, actor.key, targetId!);
      }),
    );
    const statuses = responses.map((res) => res.statusCode);
    if (!explainBatch(m.live, resolved, statuses)) {
      throw new Error(`no one-at-a-time order of the batch gives ${JSON.stringify(statuses)} from ${m.live.length} live keys`);
    }
    const revoked: KnownKey[] = [];
    resolved.forEach(({ op, targetId }, i) => {
      const res = responses[i];
      if (res.statusCode >= 400) {
        const conflict = op.action === 'create' ? 'api-key-limit' : 'last-api-key';
        expectProblem(res, res.statusCode, { 401: 'unauthenticated', 404: 'not-found', 409: conflict }[res.statusCode]);
      } else if (op.action === 'create') {
        m.live.push(expectCreated(res.json(), op.description));
      } else {
        revoked.push(...m.live.splice(m.live.findIndex((k) => k.id === targetId), 1));
      }
    });
    m.revoked.push(...revoked);
    await expectRefused(r.instances, revoked);
    await expectAgreement(m, r);
  }
  toString = () =>
    `batch[${this.ops
      .map((op) => `${op.action}(on ${'ab'[op.instance]}, by live#${op.actor}${op.action === 'delete' ? `, ${describeTarget(op.target)}` : ''})`)
      .join(', ')}]`;
}

const instance = fc.constantFrom<0 | 1>(0, 1);
const index = fc.nat({ max: 99 });
const description = fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ]{0,18}[A-Za-z0-9]$/), { nil: undefined });
const target: fc.Arbitrary<Target> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('live' as const), index, fallbackId: fc.uuid() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('revoked' as const), index, fallbackId: fc.uuid() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('unknown' as const), fallbackId: fc.uuid() }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'other-region' as const }), weight: 1 },
);
const batchOp: fc.Arbitrary<BatchOp> = fc.oneof(
  fc.record({ instance, actor: index, action: fc.constant('create' as const), description }, { requiredKeys: ['instance', 'actor', 'action'] }),
  fc.record({ instance, actor: index, action: fc.constant('delete' as const), target }),
);

const commands = fc.commands<KeyModel, Service, false>(
  [
    fc.tuple(instance, index, description).map(([i, actor, d]) => new CreateKey(i, actor, d)),
    fc.tuple(instance, index, target).map(([i, actor, t]) => new DeleteKey(i, actor, t)),
    fc.tuple(instance, fc.constantFrom<'live' | 'revoked'>('live', 'revoked'), index).map(([i, w, k]) => new Authenticate(i, w, k)),
    fc.array(batchOp, { minLength: 2, maxLength: 6 }).map((ops) => new ConcurrentBatch(ops)),
  ],
  { maxCommands: 30, size: 'max' },
);

describeOnServer('region key life cycle against a model, two instances on one PostgreSQL', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { MAX_API_KEYS_PER_REGION: String(KEY_LIMIT) };
    a = await startTestApp(env, db);
    b = await startTestApp(env, db);
    otherRegion = await newRegion(a, 'Another region');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('agrees with the model after every create, delete, authentication and concurrent batch', async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const setup = async () => {
          const r = await newRegion(a, 'Model region');
          const first = (await getRegion(b, r.key)).json().apiKeys[0];
          const model: KeyModel = { live: [{ id: r.keyId, key: r.key, description: 'first key', createdAt: first.createdAt }], revoked: [] };
          return { model, real: { instances: [a, b] as [TestApp, TestApp], regionId: r.regionId } };
        };
        await fc.asyncModelRun(setup, cmds);
        // Requests to another region's key never touched it.
        expect((await getRegion(b, otherRegion.key)).json().apiKeys.map((k: { id: string }) => k.id)).toEqual([otherRegion.keyId]);
      }),
      propertyRuns(25),
    );
  }, 180_000);
});

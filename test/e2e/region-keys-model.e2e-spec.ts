import { jest } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';

import { Clock } from '../../src/common/clock/clock';
import type { Permission } from '../../src/region-keys/permissions';
import { expectProblem } from '../support/problems';
import { propertyRuns } from '../support/property-runs';
import { newRegion, RegionFixture, TestApp, type TwoApps, twoInstances } from '../support/test-app';
import { usesPostgresServer } from '../support/test-database';

/**
 * A model of one region's keys, checked against two server instances on one PostgreSQL
 * database: fast-check generates sequences of creates, deletes, rolls, authentications,
 * steps of time and concurrent batches, made by keys of any permissions and granting any
 * permissions and allowlists (empty ones, and ones naming a network twice), and after every
 * step the service must agree with the model (status codes, the key list with when each key
 * stops, what it may do and from where, revoked and expired keys refused on both instances,
 * the region never without a permanent key holding keys:write). A roll keeps the old key's
 * permissions and allowlist unless it asks for others.
 * The embedded database serves one process only, so this runs in the PostgreSQL pass.
 *
 * Time is the test's: both instances read one shared instant from their Clock, which only
 * the advance-time command moves, so scheduled revocations are checked exactly.
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
  /** When a rolled key stops (ms since the epoch); null for a key that never does. */
  revokesAt: number | null;
  permissions: Permission[];
  allowedCidrs: string[] | null;
}

/**
 * What a client that saw every answer knows: the region's keys that still work at `now`,
 * and the ones revoked or past their revokesAt.
 */
interface KeyModel {
  now: number;
  live: KnownKey[];
  revoked: KnownKey[];
}

interface Service {
  instances: [TestApp, TestApp];
  regionId: string;
}

/** A key id to delete: resolved against the model when the command runs. */
type Target =
  | { kind: 'live' | 'permanent' | 'reader' | 'scheduled' | 'revoked'; index: number; fallbackId: string }
  | { kind: 'unknown'; fallbackId: string }
  | { kind: 'other-region' };

/** What a create or roll asks for besides its description (absent: the default). */
interface Grant {
  permissions?: Permission[];
  allowedCidrs?: string[] | null;
}

type BatchOp = { instance: 0 | 1; actor: number } & (
  | ({ action: 'create'; description?: string } & Grant)
  | { action: 'delete'; target: Target }
  | ({ action: 'roll'; target: Target; description?: string; revokeOldAfterSeconds?: number } & Grant)
);

const ALL: Permission[] = ['region:read', 'keys:write'];
const holds = (permissions: Permission[], permission: Permission) => permissions.includes(permission);
/** What the last-key rule counts: a key that can both read the region and manage its keys. */
const manages = (k: { permissions: Permission[] }) =>
  holds(k.permissions, 'region:read') && holds(k.permissions, 'keys:write');
/**
 * What a create or roll grants: the permissions asked for, else the default (a create: the
 * caller's own; a roll: the old key's), stored in a fixed order.
 */
const granted = (asked: Permission[] | undefined, byDefault: Permission[]) =>
  ALL.filter((p) => (asked ?? byDefault).includes(p));
/** An allowlist as stored: each network once (the generator sends canonical or mapped forms of these). */
const STORED: Record<string, string> = { '127.0.0.1': '127.0.0.1/32', '::ffff:127.0.0.1': '127.0.0.1/32' };
const storedCidrs = (asked: string[] | null | undefined, byDefault: string[] | null) =>
  asked === undefined ? byDefault : asked && [...new Set(asked.map((cidr) => STORED[cidr] ?? cidr))];

const DEFAULT_REVOKE_OLD_AFTER_SECONDS = 86_400;

let apps: TwoApps;
let a: TestApp;
let b: TestApp;
let otherRegion: RegionFixture;
/** The instant both instances' clocks read. */
let testNow = Date.now();

const pick = <T>(list: T[], index: number): T => list[index % list.length];

const getRegion = (t: TestApp, key: string) =>
  t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
/** The fields of a body that are not absent. */
const present = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
const postKey = (t: TestApp, key: string, description?: string, grant: Grant = {}) =>
  t.request({
    method: 'POST',
    url: '/auth/region/api-keys',
    headers: { 'x-api-key': key },
    payload: present({ description, ...grant }),
  });
const deleteKey = (t: TestApp, key: string, id: string) =>
  t.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } });
const rollKey = (
  t: TestApp,
  key: string,
  id: string,
  description?: string,
  revokeOldAfterSeconds?: number,
  grant: Grant = {},
) =>
  t.request({
    method: 'POST',
    url: `/auth/region/api-keys/${id}/roll`,
    headers: { 'x-api-key': key },
    payload: present({ description, revokeOldAfterSeconds, ...grant }),
  });

type Reply = Parameters<typeof expectProblem>[0];

const isPermanent = (k: KnownKey) => k.revokesAt === null;
const isPermanentManager = (k: KnownKey) => isPermanent(k) && manages(k);
const permanentCount = (keys: KnownKey[]) => keys.filter(isPermanent).length;
const permanentManagerCount = (keys: KnownKey[]) => keys.filter(isPermanentManager).length;
const showSeconds = (s: number | undefined) => (s === undefined ? 'default' : `${s}s`);
const showGrant = ({ permissions, allowedCidrs }: Grant) =>
  `${permissions === undefined ? 'default' : permissions.join('+')}, from ${allowedCidrs === undefined ? 'default' : JSON.stringify(allowedCidrs)}`;

function targetId(m: KeyModel, target: Target): string {
  switch (target.kind) {
    case 'other-region':
      return otherRegion.keyId;
    case 'unknown':
      return target.fallbackId;
    default: {
      const list = {
        live: m.live,
        // Aimed at the last-key rule: the region's permanent managers, and the keys about to stop.
        permanent: m.live.filter(isPermanentManager),
        // Rolls of these must not widen them.
        reader: m.live.filter((k) => !holds(k.permissions, 'keys:write')),
        scheduled: m.live.filter((k) => !isPermanent(k)),
        revoked: m.revoked,
      }[target.kind];
      return list.length > 0 ? pick(list, target.index).id : target.fallbackId;
    }
  }
}

const describeTarget = (target: Target) => ('index' in target ? `${target.kind}#${target.index}` : target.kind);

function expectCreated(
  body: Record<string, unknown>,
  description: string | null,
  permissions: Permission[],
  allowedCidrs: string[] | null,
): KnownKey {
  expect(body).toMatchObject({
    description,
    revokesAt: null,
    permissions,
    allowedCidrs,
    key: expect.stringMatching(/^rk_[0-9A-Za-z]{49}$/),
  });
  return {
    id: String(body.id),
    key: String(body.key),
    description,
    createdAt: String(body.createdAt),
    revokesAt: null,
    permissions,
    allowedCidrs,
  };
}

/** The key a successful create makes, as the model expects it. */
const expectCreatedBy = (
  body: Record<string, unknown>,
  actor: KnownKey,
  description: string | undefined,
  grant: Grant,
) =>
  expectCreated(
    body,
    description ?? null,
    granted(grant.permissions, actor.permissions),
    storedCidrs(grant.allowedCidrs, null),
  );

/**
 * Applies a successful roll of `old` to the model's live keys: the new key joins, the old
 * one is scheduled, or stops at once (0 s) and is returned. The old key may already be
 * gone when a DELETE of the same batch was applied first (a scheduled key may be deleted).
 */
function applyRoll(
  m: KeyModel,
  res: { json: () => unknown },
  old: KnownKey,
  description: string | undefined,
  seconds: number,
  grant: Grant,
): KnownKey[] {
  const revokesAt = m.now + seconds * 1000;
  const body = res.json() as Record<string, unknown>;
  expect(body.replaces).toEqual({ id: old.id, revokesAt: new Date(revokesAt).toISOString() });
  m.live.push(
    expectCreated(
      body,
      description === undefined ? old.description : description,
      granted(grant.permissions, old.permissions),
      storedCidrs(grant.allowedCidrs, old.allowedCidrs),
    ),
  );
  const index = m.live.findIndex((k) => k.id === old.id);
  if (index < 0) return [];
  if (seconds > 0) {
    m.live[index] = { ...old, revokesAt };
    return [];
  }
  return m.live.splice(index, 1);
}

/** Revoked keys, and keys past their revokesAt, are refused at once on every instance named. */
async function expectRefused(instances: TestApp[], revoked: KnownKey[]): Promise<void> {
  for (const key of revoked) {
    for (const t of instances) {
      const res = await getRegion(t, key.key);
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    }
  }
}

/**
 * The service's view of the region, through both instances and in the table, equals the
 * model's, and the region keeps at least one key holding keys:write that is not scheduled
 * to stop.
 */
async function expectAgreement(m: KeyModel, r: Service): Promise<void> {
  expect(permanentManagerCount(m.live)).toBeGreaterThanOrEqual(1);
  const expected = [...m.live]
    .map(({ id, description, createdAt, revokesAt, permissions, allowedCidrs }) => ({
      id,
      description,
      createdAt,
      revokesAt: revokesAt === null ? null : new Date(revokesAt).toISOString(),
      permissions,
      allowedCidrs,
    }))
    .sort((x, y) => x.id.localeCompare(y.id));
  // The oldest key that may read does so through one instance, and the newest through the
  // other. Keys without region:read are refused, whichever instance they ask.
  const readers = m.live.filter((k) => holds(k.permissions, 'region:read'));
  const others = m.live.filter((k) => !holds(k.permissions, 'region:read'));
  for (const [t, key] of [
    [r.instances[1], others[0]],
    [r.instances[0], others[others.length - 1]],
  ] as const) {
    if (key) expectProblem(await getRegion(t, key.key), 403, 'insufficient-permission');
  }
  const viewers =
    readers.length === 0
      ? []
      : ([
          [r.instances[0], readers[0]],
          [r.instances[1], readers[readers.length - 1]],
        ] as const);
  for (const [t, viewer] of viewers) {
    const res = await getRegion(t, viewer.key);
    expect(res.statusCode).toBe(200);
    const region = res.json<{
      id: string;
      apiKeys: {
        id: string;
        description: string | null;
        createdAt: string;
        revokesAt: string | null;
        permissions: Permission[];
        allowedCidrs: string[] | null;
      }[];
    }>();
    expect(region.id).toBe(r.regionId);
    const listed = region.apiKeys.map(({ id, description, createdAt, revokesAt, permissions, allowedCidrs }) => ({
      id,
      description,
      createdAt,
      revokesAt,
      permissions,
      allowedCidrs,
    }));
    expect([...listed].sort((x, y) => x.id.localeCompare(y.id))).toEqual(expected);
    expect(listed.some((k) => k.revokesAt === null && manages(k))).toBe(true);
    // Oldest first: keys made in one concurrent batch may share a millisecond, so this is
    // checked on the timestamps rather than on the model's order.
    const times = listed.map((k) => Date.parse(k.createdAt));
    expect(times).toEqual([...times].sort((x, y) => x - y));
  }
  const [rows] = await r.instances[0].app.get(DataSource).query(
    `SELECT count(*) FILTER (WHERE revoked_at IS NULL AND (revokes_at IS NULL OR revokes_at > $2))::int AS live,
            count(*) FILTER (WHERE revoked_at IS NULL AND revokes_at IS NULL)::int AS permanent,
            count(*) FILTER (WHERE revoked_at IS NULL AND revokes_at IS NULL
                               AND permissions @> ARRAY['region:read', 'keys:write']
                               AND (allowed_cidrs IS NULL OR cardinality(allowed_cidrs) > 0))::int AS managers,
            count(*)::int AS total
       FROM api_keys WHERE region_id = $1`,
    [r.regionId, new Date(m.now)],
  );
  expect(rows).toEqual({
    live: m.live.length,
    permanent: permanentCount(m.live),
    managers: permanentManagerCount(m.live),
    total: m.live.length + m.revoked.length,
  });
  expect(rows.managers).toBeGreaterThanOrEqual(1);
}

class CreateKey implements fc.AsyncCommand<KeyModel, Service> {
  constructor(
    readonly instance: 0 | 1,
    readonly actor: number,
    readonly description: string | undefined,
    readonly grant: Grant,
  ) {}
  check = () => true;
  async run(m: KeyModel, r: Service): Promise<void> {
    const actor = pick(m.live, this.actor);
    const res = await postKey(r.instances[this.instance], actor.key, this.description, this.grant);
    const op: BatchOp = {
      instance: this.instance,
      actor: this.actor,
      action: 'create',
      description: this.description,
      ...this.grant,
    };
    if (expectOutcome(m, op, actor, undefined, res) === '201') {
      m.live.push(expectCreatedBy(res.json(), actor, this.description, this.grant));
    }
    await expectAgreement(m, r);
  }
  toString = () =>
    `create(on ${'ab'[this.instance]}, by live#${this.actor}, ${JSON.stringify(this.description)}, ${showGrant(this.grant)})`;
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
    const actor = pick(m.live, this.actor);
    const res = await deleteKey(r.instances[this.instance], actor.key, id);
    // Unknown, revoked, expired and other regions' keys get the same 404.
    if (
      expectOutcome(
        m,
        { instance: this.instance, actor: this.actor, action: 'delete', target: this.target },
        actor,
        id,
        res,
      ) === '204'
    ) {
      expect(res.body).toBe('');
      const [revoked] = m.live.splice(
        m.live.findIndex((k) => k.id === id),
        1,
      );
      m.revoked.push(revoked);
      await expectRefused(r.instances, [revoked]);
    }
    await expectAgreement(m, r);
  }
  toString = () => `delete(on ${'ab'[this.instance]}, by live#${this.actor}, ${describeTarget(this.target)})`;
}

class RollKey implements fc.AsyncCommand<KeyModel, Service> {
  constructor(
    readonly instance: 0 | 1,
    readonly actor: number,
    readonly target: Target,
    readonly description: string | undefined,
    readonly revokeOldAfterSeconds: number | undefined,
    readonly grant: Grant,
  ) {}
  check = (m: Readonly<KeyModel>) => this.target.kind !== 'revoked' || m.revoked.length > 0;
  async run(m: KeyModel, r: Service): Promise<void> {
    const { instance, actor, target, description, revokeOldAfterSeconds, grant } = this;
    const id = targetId(m, target);
    const by = pick(m.live, actor);
    const res = await rollKey(r.instances[instance], by.key, id, description, revokeOldAfterSeconds, grant);
    if (
      expectOutcome(
        m,
        { instance, actor, action: 'roll', target, description, revokeOldAfterSeconds, ...grant },
        by,
        id,
        res,
      ) === '201'
    ) {
      expect(res.headers['cache-control']).toBe('no-store');
      const old = m.live.find((k) => k.id === id)!;
      const stopped = applyRoll(
        m,
        res,
        old,
        description,
        revokeOldAfterSeconds ?? DEFAULT_REVOKE_OLD_AFTER_SECONDS,
        grant,
      );
      m.revoked.push(...stopped);
      await expectRefused(r.instances, stopped);
    }
    await expectAgreement(m, r);
  }
  toString = () =>
    `roll(on ${'ab'[this.instance]}, by live#${this.actor}, ${describeTarget(this.target)}, ${JSON.stringify(this.description)}, ${showSeconds(this.revokeOldAfterSeconds)}, ${showGrant(this.grant)})`;
}

/** Moves both instances' clock forward: keys whose revokesAt passed stop, everywhere. */
class AdvanceTime implements fc.AsyncCommand<KeyModel, Service> {
  constructor(readonly seconds: number) {}
  check = () => true;
  async run(m: KeyModel, r: Service): Promise<void> {
    m.now += this.seconds * 1000;
    testNow = m.now;
    const stopped = m.live.filter((k) => k.revokesAt !== null && k.revokesAt <= m.now);
    m.live = m.live.filter((k) => !stopped.includes(k));
    m.revoked.push(...stopped);
    await expectRefused(r.instances, stopped);
    await expectAgreement(m, r);
  }
  toString = () => `advance(${this.seconds}s)`;
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
    const key = pick(m.live, this.index);
    const res = await getRegion(t, key.key);
    if (!holds(key.permissions, 'region:read')) {
      expectProblem(res, 403, 'insufficient-permission');
      return;
    }
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

/** The region's working keys as the rules see them: id, when it stops (null: never), what it may do. */
type KeyState = Map<string, { revokesAt: number | null; permissions: Permission[] }>;

const stateOf = (live: KnownKey[]): KeyState =>
  new Map(live.map((k) => [k.id, { revokesAt: k.revokesAt, permissions: k.permissions }]));
// Every allowlist the generators send (empty ones are refused) admits the test client: the permissions decide.

/** A request as the rules see it: what it asks, on which key, and what its caller's key holds. */
interface RuleInput {
  op: BatchOp;
  targetId?: string;
  actorId: string;
  actorPermissions: Permission[];
}

/** A key rolling itself keeps working this long at least, so that it can retry the roll. */
const MIN_SELF_ROLL_GRACE_SECONDS = 60;

/**
 * One request run alone on `keys` at time `now`: its outcome (status, and problem type
 * for errors) and the keys after it. The model's rules for create, delete and roll, used
 * by the one-at-a-time commands and replayed by the batch checker. `i` names a new key.
 */
function step(keys: KeyState, o: RuleInput, i: number, now: number): [string, KeyState] {
  const managers = [...keys.values()].filter((k) => k.revokesAt === null && manages(k)).length;
  const next = new Map(keys);
  // Every change needs keys:write (checked before the body); an empty allowlist is a 400;
  // no change grants a permission its caller lacks.
  if (!holds(o.actorPermissions, 'keys:write')) return ['403 insufficient-permission', keys];
  if (o.op.action !== 'delete' && o.op.allowedCidrs?.length === 0) return ['400 validation', keys];
  const beyondCaller = (permissions: Permission[]) => permissions.some((p) => !holds(o.actorPermissions, p));
  const asked = o.op.action === 'delete' ? undefined : o.op.permissions;
  if (asked && beyondCaller(asked)) return ['403 insufficient-permission', keys];
  const seconds = o.op.action === 'roll' ? (o.op.revokeOldAfterSeconds ?? DEFAULT_REVOKE_OLD_AFTER_SECONDS) : 0;
  if (o.op.action === 'roll' && o.targetId === o.actorId && seconds < MIN_SELF_ROLL_GRACE_SECONDS)
    return ['400 validation', keys];
  if (o.op.action === 'create') {
    if (keys.size >= KEY_LIMIT) return ['409 api-key-limit', keys];
    return ['201', next.set(`new-${i}`, { revokesAt: null, permissions: granted(asked, o.actorPermissions) })];
  }
  const id = o.targetId!;
  if (!keys.has(id)) return ['404 not-found', keys];
  const target = keys.get(id)!;
  const lastManager = target.revokesAt === null && manages(target) && managers <= 1;
  if (o.op.action === 'delete') {
    // Keys scheduled to stop, and keys that cannot manage keys, do not count.
    if (lastManager) return ['409 last-api-key', keys];
    next.delete(id);
    return ['204', next];
  }
  if (target.revokesAt !== null) return ['409 api-key-already-rolled', keys];
  // Asking for none keeps the old key's permissions, which the caller must hold too.
  const permissions = granted(asked, target.permissions);
  if (beyondCaller(permissions)) return ['403 insufficient-permission', keys];
  // The limit counts the new key; an old key revoked at once no longer counts.
  if (keys.size + 1 - (seconds === 0 ? 1 : 0) > KEY_LIMIT) return ['409 api-key-limit', keys];
  // The old key stops; its replacement must be able to manage the region in its place.
  if (lastManager && !manages({ permissions })) return ['409 last-api-key', keys];
  next.set(`new-${i}`, { revokesAt: null, permissions });
  if (seconds === 0) next.delete(id);
  else next.set(id, { ...target, revokesAt: now + seconds * 1000 });
  return ['201', next];
}

/** A response as `step` names outcomes. */
const outcomeOf = (res: Reply) =>
  res.statusCode < 400 ? String(res.statusCode) : `${res.statusCode} ${String(res.json().type).split('/').pop()}`;

/** Checks a one-at-a-time response against the model's rule; returns the outcome. */
function expectOutcome(m: KeyModel, op: BatchOp, actor: KnownKey, targetId: string | undefined, res: Reply): string {
  const [outcome] = step(
    stateOf(m.live),
    { op, targetId, actorId: actor.id, actorPermissions: actor.permissions },
    0,
    m.now,
  );
  const [status, type] = outcome.split(' ');
  if (type) expectProblem(res, Number(status), type);
  else expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: Number(status) });
  return outcome;
}

/**
 * Whether the outcomes of a concurrent batch are what some one-at-a-time order of its
 * requests would give (each change locks the region row, so they do run one at a time).
 * A 401 is allowed only for a request whose key another request of the batch revoked (a
 * DELETE, or a roll with 0 s): it may be checked before or after that revocation commits.
 */
function explainBatch(live: KnownKey[], ops: ResolvedOp[], outcomes: string[], now: number): boolean {
  const revokedHere = new Set(
    ops
      .filter(
        (o, i) =>
          (o.op.action === 'delete' && outcomes[i] === '204') ||
          (o.op.action === 'roll' && o.op.revokeOldAfterSeconds === 0 && outcomes[i] === '201'),
      )
      .map((o) => o.targetId),
  );
  const refused = (i: number) => outcomes[i] === '401 unauthenticated';
  if (ops.some((o, i) => refused(i) && !revokedHere.has(o.actor.id))) return false;
  const pending = ops.map((_, i) => i).filter((i) => !refused(i));
  const search = (keys: KeyState, left: number[]): boolean =>
    left.length === 0 ||
    left.some((i) => {
      const [outcome, next] = step(
        keys,
        { ...ops[i], actorId: ops[i].actor.id, actorPermissions: ops[i].actor.permissions },
        i,
        now,
      );
      return (
        outcome === outcomes[i] &&
        search(
          next,
          left.filter((j) => j !== i),
        )
      );
    });
  return search(stateOf(live), pending);
}

const grantOf = ({ permissions, allowedCidrs }: Grant): Grant => ({ permissions, allowedCidrs });

const sendOp = (t: TestApp, { op, actor, targetId }: ResolvedOp) => {
  switch (op.action) {
    case 'create':
      return postKey(t, actor.key, op.description, grantOf(op));
    case 'delete':
      return deleteKey(t, actor.key, targetId!);
    default:
      return rollKey(t, actor.key, targetId!, op.description, op.revokeOldAfterSeconds, grantOf(op));
  }
};

class ConcurrentBatch implements fc.AsyncCommand<KeyModel, Service> {
  constructor(readonly ops: BatchOp[]) {}
  check = () => true;
  async run(m: KeyModel, r: Service): Promise<void> {
    const before = [...m.live];
    const resolved: ResolvedOp[] = this.ops.map((op) => ({
      op,
      actor: pick(m.live, op.actor),
      targetId: op.action === 'create' ? undefined : targetId(m, op.target),
    }));
    const responses = await Promise.all(resolved.map((o) => sendOp(r.instances[o.op.instance], o)));
    const outcomes = responses.map(outcomeOf);
    if (!explainBatch(m.live, resolved, outcomes, m.now)) {
      throw new Error(
        `no one-at-a-time order of the batch gives ${JSON.stringify(outcomes)} from ${JSON.stringify([...stateOf(m.live).values()])}`,
      );
    }
    const revoked: KnownKey[] = [];
    resolved.forEach(({ op, actor, targetId }, i) => {
      const res = responses[i];
      if (res.statusCode >= 400) {
        const [status, type] = outcomes[i].split(' ');
        expectProblem(res, Number(status), type);
      } else if (op.action === 'create') {
        m.live.push(expectCreatedBy(res.json(), actor, op.description, grantOf(op)));
      } else if (op.action === 'roll') {
        const old = before.find((k) => k.id === targetId)!;
        const seconds = op.revokeOldAfterSeconds ?? DEFAULT_REVOKE_OLD_AFTER_SECONDS;
        revoked.push(...applyRoll(m, res, old, op.description, seconds, grantOf(op)));
      } else {
        const index = m.live.findIndex((k) => k.id === targetId);
        if (index >= 0) revoked.push(...m.live.splice(index, 1));
      }
    });
    m.revoked.push(...revoked);
    await expectRefused(r.instances, revoked);
    await expectAgreement(m, r);
  }
  toString = () => `batch[${this.ops.map(describeOp).join(', ')}]`;
}

function describeOp(op: BatchOp): string {
  const on = `on ${'ab'[op.instance]}, by live#${op.actor}`;
  switch (op.action) {
    case 'create':
      return `create(${on}, ${JSON.stringify(op.description)}, ${showGrant(op)})`;
    case 'delete':
      return `delete(${on}, ${describeTarget(op.target)})`;
    default:
      return `roll(${on}, ${describeTarget(op.target)}, ${JSON.stringify(op.description)}, ${showSeconds(op.revokeOldAfterSeconds)}, ${showGrant(op)})`;
  }
}

const instance = fc.constantFrom<0 | 1>(0, 1);
const index = fc.nat({ max: 99 });
const description = fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ]{0,18}[A-Za-z0-9]$/), { nil: undefined });
const permanentTarget = fc.record({ kind: fc.constant('permanent' as const), index, fallbackId: fc.uuid() });
const readerTarget = fc.record({ kind: fc.constant('reader' as const), index, fallbackId: fc.uuid() });
const target: fc.Arbitrary<Target> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('live' as const), index, fallbackId: fc.uuid() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('scheduled' as const), index, fallbackId: fc.uuid() }), weight: 1 },
  { arbitrary: permanentTarget, weight: 2 },
  { arbitrary: readerTarget, weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('revoked' as const), index, fallbackId: fc.uuid() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('unknown' as const), fallbackId: fc.uuid() }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'other-region' as const }), weight: 1 },
);
// Omitted: the caller's own on a create, the old key's on a roll. Read-only and write-only keys come from these.
const permissions = fc.option(
  fc.constantFrom<Permission[]>(['region:read'], ['keys:write'], ['region:read', 'keys:write']),
  { nil: undefined },
);
// Omitted: any address on a create, the old key's on a roll. Each admits the test client
// (127.0.0.1), as the model assumes; the empty list is a 400, the others name a network twice.
const allowedCidrs = fc.option(
  fc.constantFrom<string[] | null>(
    null,
    [],
    ['127.0.0.1/32', '127.0.0.1'],
    ['127.0.0.0/8', '2001:db8::/32', '::ffff:127.0.0.1', '127.0.0.0/8'],
  ),
  { nil: undefined },
);
const grant: fc.Arbitrary<Grant> = fc.record({ permissions, allowedCidrs }, { requiredKeys: [] });
// Omitted: the default, a day.
const revokeOldAfterSeconds = fc.option(fc.constantFrom(0, 1, 5, 60), { nil: undefined });
const batchOp: fc.Arbitrary<BatchOp> = fc.oneof(
  fc.record(
    { instance, actor: index, action: fc.constant('create' as const), description, permissions, allowedCidrs },
    { requiredKeys: ['instance', 'actor', 'action'] },
  ),
  fc.record({ instance, actor: index, action: fc.constant('delete' as const), target }),
  fc.record(
    {
      instance,
      actor: index,
      action: fc.constant('roll' as const),
      target,
      description,
      revokeOldAfterSeconds,
      permissions,
      allowedCidrs,
    },
    { requiredKeys: ['instance', 'actor', 'action', 'target'] },
  ),
);

const commands = fc.commands<KeyModel, Service, false>(
  [
    fc.tuple(instance, index, description, grant).map(([i, actor, d, g]) => new CreateKey(i, actor, d, g)),
    fc.tuple(instance, index, target).map(([i, actor, t]) => new DeleteKey(i, actor, t)),
    // Deletes of permanent keys again, more often: they are where the last-key rule decides.
    fc.tuple(instance, index, permanentTarget).map(([i, actor, t]) => new DeleteKey(i, actor, t)),
    fc
      .tuple(instance, index, target, description, revokeOldAfterSeconds, grant)
      .map(([i, actor, t, d, s, g]) => new RollKey(i, actor, t, d, s, g)),
    // Rolls of a permanent manager into a key that cannot manage: refused when it is the last.
    fc
      .tuple(instance, index, permanentTarget, revokeOldAfterSeconds)
      .map(([i, actor, t, s]) => new RollKey(i, actor, t, undefined, s, { permissions: ['region:read'] })),
    // Rolls of the lone manager into an empty allowlist (a 400), and of read-only keys asking for
    // nothing (they stay read-only).
    fc
      .tuple(instance, index, permanentTarget, revokeOldAfterSeconds)
      .map(([i, actor, t, s]) => new RollKey(i, actor, t, undefined, s, { allowedCidrs: [] })),
    fc
      .tuple(instance, index, readerTarget, revokeOldAfterSeconds)
      .map(([i, actor, t, s]) => new RollKey(i, actor, t, undefined, s, {})),
    fc.constantFrom(1, 5, 61, DEFAULT_REVOKE_OLD_AFTER_SECONDS + 1).map((s) => new AdvanceTime(s)),
    fc
      .tuple(instance, fc.constantFrom<'live' | 'revoked'>('live', 'revoked'), index)
      .map(([i, w, k]) => new Authenticate(i, w, k)),
    fc.array(batchOp, { minLength: 2, maxLength: 6 }).map((ops) => new ConcurrentBatch(ops)),
  ],
  { maxCommands: 30, size: 'max' },
);

describeOnServer('region key life cycle against a model, two instances on one PostgreSQL', () => {
  beforeAll(async () => {
    apps = await twoInstances({ MAX_API_KEYS_PER_REGION: String(KEY_LIMIT) });
    ({ a, b } = apps);
    for (const t of [a, b]) jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date(testNow));
    otherRegion = await newRegion(a, 'Another region');
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await apps?.close();
  });

  it('agrees with the model after every create, delete, roll, authentication, step of time and concurrent batch, by keys of any permissions', async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const setup = async () => {
          // Each run starts from the real time, never before where the previous run left the clocks.
          testNow = Math.max(testNow, Date.now());
          const r = await newRegion(a, 'Model region');
          const first = (await getRegion(b, r.key)).json().apiKeys[0];
          const model: KeyModel = {
            now: testNow,
            live: [
              {
                id: r.keyId,
                key: r.key,
                description: 'first key',
                createdAt: first.createdAt,
                revokesAt: null,
                permissions: ALL,
                allowedCidrs: null,
              },
            ],
            revoked: [],
          };
          return { model, real: { instances: [a, b] as [TestApp, TestApp], regionId: r.regionId } };
        };
        await fc.asyncModelRun(setup, cmds);
        // Requests to another region's key never touched it.
        expect((await getRegion(b, otherRegion.key)).json().apiKeys.map((k: { id: string }) => k.id)).toEqual([
          otherRegion.keyId,
        ]);
      }),
      propertyRuns(25),
    );
  }, 180_000);
});

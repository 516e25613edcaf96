import bcrypt from 'bcrypt';

import { PasswordHasher } from '../../src/users/password-hasher';

describe('PasswordHasher', () => {
  let hasher: PasswordHasher;

  beforeAll(async () => {
    hasher = new PasswordHasher({ BCRYPT_COST: 4 });
    hasher.onModuleInit();
  });

  it('hashes with bcrypt at the configured cost and verifies', async () => {
    const hash = await hasher.hash('correct horse');
    expect(hash).toMatch(/^\$2b\$04\$.{53}$/);
    await expect(hasher.compare('correct horse', hash)).resolves.toBe(true);
    await expect(hasher.compare('correct horsf', hash)).resolves.toBe(false);
  });

  it('refuses a password longer than 72 bytes instead of comparing only its start', async () => {
    const seventyTwo = 'a'.repeat(72);
    const hash = await hasher.hash(seventyTwo);
    // What bcrypt alone would do: the 73rd byte is ignored.
    await expect(bcrypt.compare(`${seventyTwo}b`, hash)).resolves.toBe(true);
    await expect(hasher.compare(`${seventyTwo}b`, hash)).resolves.toBe(false);
    await expect(hasher.hash(`${seventyTwo}b`)).rejects.toThrow(RangeError);
    // Bytes, not characters: 25 euro signs are 75 bytes.
    await expect(hasher.hash('€'.repeat(25))).rejects.toThrow(RangeError);
  });

  it('answers false for a missing hash (unknown email)', async () => {
    await expect(hasher.compare('anything-at-all', null)).resolves.toBe(false);
  });
});

/** The real hasher, with the waits it asks for recorded instead of waited. */
class RecordingHasher extends PasswordHasher {
  readonly waits: number[] = [];

  protected override wait(ms: number): Promise<void> {
    this.waits.push(ms);
    return Promise.resolve();
  }

  /** What a comparison at the current cost takes now, as timed at start and since. */
  async floor(): Promise<number> {
    await this['timedAtStart'];
    return this['floorMs']();
  }
}

describe('PasswordHasher after BCRYPT_COST changed', () => {
  // Costs far apart, so that one check takes a small part of the other's time even on a busy machine.
  const [LOW, HIGH] = [4, 10];

  async function hasherAt(cost: number) {
    const hasher = new RecordingHasher({ BCRYPT_COST: cost });
    hasher.onModuleInit();
    return { hasher, floorMs: await hasher.floor() };
  }

  it('raised: a wrong password against an older, cheaper hash fails no sooner than a check at the current cost', async () => {
    const { hasher, floorMs } = await hasherAt(HIGH);
    const older = await bcrypt.hash('right password', LOW);

    const started = performance.now();
    await expect(hasher.compare('wrong password', older)).resolves.toBe(false);
    const checkedMs = performance.now() - started;
    expect(hasher.waits).toHaveLength(1);
    expect(hasher.waits[0] + checkedMs).toBeGreaterThanOrEqual(floorMs);
  });

  it('asks for no wait on a right password', async () => {
    const { hasher } = await hasherAt(HIGH);
    await expect(hasher.compare('right password', await bcrypt.hash('right password', LOW))).resolves.toBe(true);
    expect(hasher.waits).toEqual([]);
  });

  it('lowered: once a failure against an older, dearer hash is seen, an unknown email fails for as long', async () => {
    const { hasher, floorMs } = await hasherAt(LOW);
    const older = await bcrypt.hash('right password', HIGH);

    await expect(hasher.compare('wrong password', older)).resolves.toBe(false);
    // What the hasher timed that failure at; compared with its own figures, not a second timing, so load cannot flip it.
    const dearerMs = hasher['higherCosts'].get(HIGH) ?? Number.NaN;
    expect(dearerMs).toBeGreaterThan(floorMs);
    hasher.waits.length = 0;
    const started = performance.now();
    await expect(hasher.compare('wrong password', null)).resolves.toBe(false);
    const checkedMs = performance.now() - started;
    expect(hasher.waits).toHaveLength(1);
    expect(hasher.waits[0] + checkedMs).toBeGreaterThanOrEqual(dearerMs);
  });

  it('tells which hashes to make again: another cost, not the current one nor what is no bcrypt hash', async () => {
    const { hasher } = await hasherAt(LOW);
    expect(hasher.needsRehash(await bcrypt.hash('x', LOW + 1))).toBe(true);
    expect(hasher.needsRehash(await bcrypt.hash('x', LOW))).toBe(false);
    expect(hasher.needsRehash('!unusable')).toBe(false);
  });
});

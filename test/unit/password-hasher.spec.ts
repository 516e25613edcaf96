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

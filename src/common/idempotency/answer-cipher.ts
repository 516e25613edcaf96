import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The keys one Idempotency-Key of one caller yields. */
export interface KeyMaterial {
  /** The row's lookup: SHA-256 of the caller's scope and the key. */
  keyHash: Buffer;
  /** Authenticates the request's fingerprint: nobody without the key can test a guess of a body. */
  fingerprintKey: Buffer;
  /** AES-256-GCM key of the kept answer. */
  answerKey: Buffer;
}

/**
 * The answers kept for replays hold secrets (a new API key), so they are stored encrypted
 * with a key that exists only while a request with the Idempotency-Key is being served:
 * HKDF-SHA-256 of the Idempotency-Key (which only the client holds) salted with the server
 * secret. A database dump alone decrypts nothing; a dump and the server secret decrypt only
 * answers whose Idempotency-Key can be guessed.
 */
export class AnswerCipher {
  private readonly serverSalt: Buffer;

  /**
   * @param ephemeral the secret was made at start (no JWT_SECRET): kept answers do not outlive
   *   the process, nor reach another instance.
   */
  constructor(
    serverSecret: string,
    readonly ephemeral = false,
  ) {
    this.serverSalt = Buffer.from(
      hkdfSync('sha256', serverSecret, Buffer.alloc(0), 'region-keys-api idempotent answers v1', 32),
    );
  }

  keysFor(scope: string, idempotencyKey: string): KeyMaterial {
    const scoped = `${scope}\0${idempotencyKey}`;
    const keys = Buffer.from(hkdfSync('sha256', scoped, this.serverSalt, 'answer and fingerprint keys', 64));
    return {
      keyHash: createHash('sha256').update(scoped).digest(),
      fingerprintKey: keys.subarray(0, 32),
      answerKey: keys.subarray(32),
    };
  }

  fingerprint(keys: KeyMaterial, request: string | Buffer): Buffer {
    return createHmac('sha256', keys.fingerprintKey).update(request).digest();
  }

  encrypt(keys: KeyMaterial, plain: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keys.answerKey, iv).setAAD(keys.keyHash);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
  }

  /** Null when it cannot be decrypted (the server secret changed since). */
  decrypt(keys: KeyMaterial, stored: Buffer): string | null {
    try {
      const decipher = createDecipheriv('aes-256-gcm', keys.answerKey, stored.subarray(0, IV_BYTES))
        .setAAD(keys.keyHash)
        .setAuthTag(stored.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(stored.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

import { Writable } from 'node:stream';

import { QueryFailedError } from 'typeorm';

import { createRootLogger, errorWithoutValues } from '../../src/common/logging/logger';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}

describe('createRootLogger', () => {
  it('writes JSON lines by default, and in development when not on a terminal', () => {
    for (const development of [false, true]) {
      const { lines, destination } = capture();
      createRootLogger({ level: 'info', format: 'auto', development, destination }).info(
        { requestId: 'r1' },
        'request completed',
      );
      expect(JSON.parse(lines[0])).toMatchObject({ level: 30, requestId: 'r1', msg: 'request completed' });
    }
  });

  it('writes human-readable lines when asked for pretty', () => {
    const { lines, destination } = capture();
    createRootLogger({ level: 'info', format: 'pretty', destination }).info({ requestId: 'r1' }, 'request completed');
    const text = lines.join('\n');
    expect(() => JSON.parse(lines[0])).toThrow();
    expect(text).toMatch(/INFO.*request completed/);
    expect(text).toMatch(/requestId: "r1"/);
  });
});

describe('errorWithoutValues', () => {
  it('logs a failed query with its SQL and code, but none of its parameter values or the row PostgreSQL quotes', () => {
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      code: '23505',
      detail: 'Key (email)=(someone@example.com) already exists.',
      parameters: ['someone@example.com', '$2b$12$hash'],
    });
    const err = new QueryFailedError(
      'INSERT INTO users (email, password_hash) VALUES ($1, $2)',
      ['someone@example.com', '$2b$12$hash'],
      driverError,
    );
    const logged = JSON.stringify(errorWithoutValues(err));
    expect(logged).toContain('INSERT INTO users');
    expect(logged).toContain('23505');
    expect(logged).not.toContain('someone@example.com');
    expect(logged).not.toContain('$2b$12$hash');
  });

  it('keeps what an ordinary error says', () => {
    expect(errorWithoutValues(new TypeError('x is not a function'))).toMatchObject({
      type: 'TypeError',
      message: 'x is not a function',
      stack: expect.any(String),
    });
  });
});

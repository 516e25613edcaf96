import { withLibpqSslModes } from '../../src/database/data-source';
import { defaultApplicationName, isRefusedConnection } from '../../src/database/pooled-connections';
import { isTlsVerificationError, startFailure } from '../../src/database/start-failure';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('withLibpqSslModes', () => {
  const base = 'postgres://u:secret@db.example.com:5432/app';

  it('leaves a URL without sslmode as it is', () => {
    expect(withLibpqSslModes(base)).toBe(base);
  });

  it.each(['disable', 'prefer', 'require', 'verify-full'])('gives sslmode=%s its libpq meaning', (mode) => {
    const url = new URL(withLibpqSslModes(`${base}?sslmode=${mode}`));
    expect(url.searchParams.get('sslmode')).toBe(mode);
    expect(url.searchParams.get('uselibpqcompat')).toBe('true');
    expect(url.password).toBe('secret');
  });

  it('leaves a URL the WHATWG parser refuses to node-postgres, never echoing it', () => {
    const url = 'postgres://u:pa#ss@db:5432/app?sslmode=require';
    expect(withLibpqSslModes(url)).toBe(url);
  });

  it('keeps an explicit uselibpqcompat', () => {
    const url = `${base}?sslmode=require&uselibpqcompat=false`;
    expect(withLibpqSslModes(url)).toBe(url);
  });

  it.each([
    ['an unknown mode', `${base}?sslmode=required`, /sslmode=required is not one of disable, allow, prefer, require/],
    ['verify-ca without a CA', `${base}?sslmode=verify-ca`, /verify-ca needs sslrootcert/],
  ])('refuses %s, naming the setting and not the password', (_, url, message) => {
    expect(() => withLibpqSslModes(url)).toThrow(message);
    expect(() => withLibpqSslModes(url)).not.toThrow(/secret/);
  });
});

describe('isRefusedConnection', () => {
  it.each([
    ['too_many_connections', withCode('53300', 'sorry, too many clients already')],
    ['reserved slots', withCode('53300', 'remaining connection slots are reserved')],
    ['a pooler at max_client_conn', withCode('08P01', 'no more connections allowed (max_client_conn)')],
  ])('takes %s for a refusal', (_, err) => {
    expect(isRefusedConnection(err)).toBe(true);
  });

  it.each([
    ['a server that is down', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a wrong password', withCode('28P01', 'password authentication failed')],
    ['nothing', undefined],
  ])('does not take %s for one', (_, err) => {
    expect(isRefusedConnection(err)).toBe(false);
  });
});

describe('defaultApplicationName', () => {
  it('names the service, the host and the process, within 63 printable characters', () => {
    const name = defaultApplicationName();
    expect(name.startsWith('region-keys-api/')).toBe(true);
    expect(name).toMatch(/^[\x20-\x7e]{1,63}$/);
    if (name.length < 63) expect(name.endsWith(`/${process.pid}`)).toBe(true);
  });
});

describe('startFailure', () => {
  it.each(['SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID'])(
    'says a %s certificate failed verification and what to check, in one line',
    (code) => {
      const err = startFailure(withCode(code, 'self-signed certificate in certificate chain')) as Error;
      expect(isTlsVerificationError(withCode(code))).toBe(true);
      expect(err.message).toMatch(/TLS certificate failed verification .*sslrootcert/);
      expect(err.message).not.toContain('\n');
    },
  );

  it('says the server does not take TLS when the URL asks for it', () => {
    const err = startFailure(new Error('The server does not support SSL connections')) as Error;
    expect(err.message).toMatch(/does not accept TLS.*sslmode/);
  });

  it('leaves other errors as they are', () => {
    const err = withCode('ECONNREFUSED');
    expect(startFailure(err)).toBe(err);
  });
});

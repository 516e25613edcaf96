import { parseBasicAuthorization } from '../../src/auth/basic-credentials';

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('parseBasicAuthorization', () => {
  it('reads email and password, normalising the email', () => {
    expect(parseBasicAuthorization(`Basic ${encode(' Ann@Example.COM:secret-pw')}`)).toEqual({
      email: 'ann@example.com',
      password: 'secret-pw',
    });
  });

  it('gives the email in its canonical form, whatever the spelling', () => {
    for (const spelling of ['ANN@BU\u0308CHER.com', 'ann@xn--bcher-kva.com', '\uff41nn@b\u00fccher.com']) {
      expect(parseBasicAuthorization(`Basic ${encode(`${spelling}:pw`)}`)).toEqual({
        email: 'ann@xn--bcher-kva.com',
        password: 'pw',
      });
    }
  });

  it('splits on the first colon only, so a password may contain colons', () => {
    expect(parseBasicAuthorization(`Basic ${encode('ann@example.com:pa:ss:word')}`)).toEqual({
      email: 'ann@example.com',
      password: 'pa:ss:word',
    });
  });

  it('accepts the scheme in any case and UTF-8 passwords', () => {
    expect(parseBasicAuthorization(`basic ${encode('ann@example.com:€€€-pässwörd')}`)?.password).toBe('€€€-pässwörd');
  });

  it('accepts base64 without padding', () => {
    const unpadded = encode('ann@example.com:pw1').replace(/=+$/, '');
    expect(parseBasicAuthorization(`Basic ${unpadded}`)).toEqual({ email: 'ann@example.com', password: 'pw1' });
  });

  it.each([
    ['no header', undefined],
    ['an array of headers', ['Basic x']],
    ['no colon', `Basic ${encode('ann@example.com')}`],
    ['an empty email', `Basic ${encode(':password')}`],
    ['an email with a zero-width space', `Basic ${encode('ann\u200b@example.com:password')}`],
    ['an email mixing Latin and Cyrillic letters', `Basic ${encode('\u0441at@example.com:password')}`],
    ['an empty password', `Basic ${encode('ann@example.com:')}`],
    ['characters outside base64', 'Basic !!!!'],
    [
      'base64 with a stray character inside',
      `Basic ${encode('ann@example.com:pw').slice(0, 4)}*${encode('ann@example.com:pw').slice(4)}`,
    ],
    ['an impossible base64 length', 'Basic QUJDRE'],
    ['bytes that are not UTF-8', `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`],
    ['no credentials after the scheme', 'Basic'],
    ['another scheme', `Bearer ${encode('ann@example.com:pw')}`],
    ['a scheme that merely contains "Basic"', `XBasic ${encode('ann@example.com:pw')}`],
  ])('refuses %s', (_label, header) => {
    expect(parseBasicAuthorization(header)).toBeNull();
  });
});

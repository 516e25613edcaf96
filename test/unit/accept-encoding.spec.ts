import { negotiatedCoding } from '../../src/common/http/accept-encoding';

describe('negotiatedCoding (Accept-Encoding, RFC 9110 section 12.5.3)', () => {
  it.each([
    ['gzip', 'gzip'],
    ['gzip, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['*', 'br'],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *', 'gzip'],
    ['gzip;q=0, br;q=0, *', 'identity'],
    ['*;q=0', 'identity'],
    ['*;q=0, gzip;q=0.001', 'gzip'],
    ['identity;q=0', 'identity'],
    ['identity;q=0, *;q=0', 'identity'],
    ['gzip;q=1, gzip;q=0', 'identity'],
    ['gzip;q=0.0001', 'identity'],
    // A weight is `q=` and a qvalue with nothing between; space around `;` is allowed.
    ['gzip;q=\t1', 'identity'],
    ['br; q=0.4, gzip; q=0.5', 'gzip'],
    ['gzip;q=1.5', 'identity'],
    ['gzip;q=', 'identity'],
    ['GZIP;Q=0.3, Br;q=0.2', 'gzip'],
    ['gzip ; level=9', 'gzip'],
    ['deflate, compress', 'identity'],
    [',, ;q=1, br', 'br'],
    ['', 'identity'],
  ])('%j → %s', (header, coding) => {
    expect(negotiatedCoding(header)).toBe(coding);
  });
});

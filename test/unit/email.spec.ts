import { domainToASCII } from 'node:url';

import fc from 'fast-check';

import {
  canonicalEmail,
  checkEmail,
  EMAIL_CANONICAL_LENGTH_MESSAGE,
  EMAIL_MIXED_SCRIPT_MESSAGE,
  EMAIL_UNSEEN_MESSAGE,
} from '../../src/users/email';
import { address, INVISIBLES, variantOf, withInserted } from '../support/email-forms';
import { nastyString } from '../support/hostile-input';
import { propertyRuns } from '../support/property-runs';

const CYRILLIC_ES = '\u0441'; // looks like a Latin "c"

describe('canonicalEmail', () => {
  it.each([
    ['NFC and NFD', 'jos\u00e9@example.com', 'jose\u0301@example.com', 'jos\u00e9@example.com'],
    ['a fullwidth letter in the local part', '\uff42ob@example.com', 'bob@example.com', 'bob@example.com'],
    ['a fullwidth letter in the domain', 'bob@\uff45xample.com', 'bob@example.com', 'bob@example.com'],
    ['a fullwidth @ and full stop', 'bob\uff20example\uff0ecom', 'bob@example.com', 'bob@example.com'],
    ['a Unicode and an IDNA ASCII domain', 'ann@b\u00fccher.com', 'ann@xn--bcher-kva.com', 'ann@xn--bcher-kva.com'],
    [
      'a decomposed Unicode domain and the ASCII one',
      'ann@bu\u0308cher.com',
      'ann@XN--BCHER-KVA.COM',
      'ann@xn--bcher-kva.com',
    ],
    [
      'upper and lower case, local part and domain',
      'ANN@B\u00dcCHER.COM',
      'ann@b\u00fccher.com',
      'ann@xn--bcher-kva.com',
    ],
    ['a ligature and its letters', 'o\ufb03ce@example.com', 'office@example.com', 'office@example.com'],
    ['surrounding spaces', '  ann@example.com \t', 'ann@example.com', 'ann@example.com'],
  ])('gives one canonical form to %s', (_label, a, b, canonical) => {
    expect(canonicalEmail(a)).toBe(canonical);
    expect(canonicalEmail(b)).toBe(canonical);
  });

  it('keeps apart what only looks alike through case folding: ß in a domain is not ss (UTS #46)', () => {
    expect(canonicalEmail('ann@stra\u00dfe.de')).toBe('ann@xn--strae-oqa.de');
    expect(canonicalEmail('ann@strasse.de')).toBe('ann@strasse.de');
  });

  it.each([
    ['a zero-width space', 'ann\u200b@example.com'],
    ['a zero-width joiner', 'an\u200dn@example.com'],
    ['a zero-width non-joiner', 'an\u200cn@example.com'],
    ['a soft hyphen', 'ann@exam\u00adple.com'],
    ['a right-to-left override', 'ann\u202e@example.com'],
    ['a byte order mark', 'an\ufeffn@example.com'],
    ['a line separator', 'ann@exa\u2028mple.com'],
    ['a word joiner', 'an\u2060n@example.com'],
    ['a variation selector', 'an\ufe0fn@example.com'],
    ['a line feed', 'an\nn@example.com'],
    ['a no-break space', 'an\u00a0n@example.com'],
    ['a lone surrogate', 'an\ud800n@example.com'],
    ['a private-use character', 'an\ue000n@example.com'],
  ])('refuses %s anywhere in the address', (_label, email) => {
    expect(checkEmail(email)).toEqual({ ok: false, problem: EMAIL_UNSEEN_MESSAGE });
  });

  it.each([
    ['a Cyrillic letter among Latin ones in the local part', `${CYRILLIC_ES}at@example.com`],
    ['a Cyrillic letter among Latin ones in a domain label', `cat@exam${CYRILLIC_ES}le.com`],
    ['the same domain label sent already in ASCII form', `cat@${domainToASCII(`exam${CYRILLIC_ES}le.com`)}`],
    ['a Greek letter among Latin ones', 'c\u03bfde@example.com'],
  ])('refuses %s', (_label, email) => {
    expect(checkEmail(email)).toEqual({ ok: false, problem: EMAIL_MIXED_SCRIPT_MESSAGE });
  });

  it('takes one script per part, and different scripts in different parts', () => {
    expect(canonicalEmail('\u0438\u0432\u0430\u043d@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444')).toBe(
      '\u0438\u0432\u0430\u043d@xn--e1afmkfd.xn--p1ai',
    );
    expect(canonicalEmail('ivan@\u043f\u0440\u0438\u043c\u0435\u0440.com')).toBe('ivan@xn--e1afmkfd.com');
  });

  it('counts the length of the canonical form, whose ASCII domain is longer than the Unicode one', () => {
    // Six labels of twelve Han characters: 83 characters, 263 once each label is in Punycode.
    const unicode = `a@${Array(6).fill('日本語漢字中文域名測試長').join('.')}.com`;
    expect(unicode.length).toBeLessThanOrEqual(254);
    expect(checkEmail(unicode)).toEqual({ ok: false, problem: EMAIL_CANONICAL_LENGTH_MESSAGE });
  });

  it('refuses what is not an address', () => {
    for (const email of ['', 'ann', 'ann@', '@example.com', 'ann@exa mple.com', 'a@b@', 'ann@-.com']) {
      expect(checkEmail(email).ok).toBe(false);
    }
  });

  it('shows back the local part as written and the domain in Unicode', () => {
    expect(checkEmail(' Ann@XN--BCHER-KVA.com ')).toEqual({
      ok: true,
      email: 'Ann@b\u00fccher.com',
      canonical: 'ann@xn--bcher-kva.com',
    });
    expect(checkEmail('Jose\u0301@\uff45xample.com')).toEqual({
      ok: true,
      email: 'Jos\u00e9@example.com',
      canonical: 'jos\u00e9@example.com',
    });
  });
});

describe('canonicalEmail, properties', () => {
  it('gives every case, width, normalisation and domain-form variant of an address the canonical form of the address', () => {
    fc.assert(
      fc.property(
        address.chain((email) => fc.tuple(fc.constant(email), variantOf(email))),
        ([email, variant]) => {
          const canonical = canonicalEmail(email);
          expect(canonical).not.toBeNull();
          expect(canonicalEmail(variant)).toBe(canonical);
        },
      ),
      propertyRuns(500),
    );
  });

  it('refuses any variant with an invisible, control or bidirectional character inserted anywhere inside', () => {
    fc.assert(
      fc.property(
        address
          .chain((email) => variantOf(email))
          .chain((variant) => withInserted(variant.trim(), fc.constantFrom(...INVISIBLES))),
        (tainted) => {
          expect(checkEmail(tainted)).toEqual({ ok: false, problem: EMAIL_UNSEEN_MESSAGE });
        },
      ),
      propertyRuns(500),
    );
  });

  it('refuses any address with a Cyrillic or Greek look-alike letter put among the Latin ones', () => {
    const lookAlike = fc.constantFrom('\u0430', '\u0435', '\u043e', '\u0440', '\u0441', '\u0445', '\u03bf', '\u03b1');
    fc.assert(
      fc.property(
        address.chain((email) => withInserted(email, lookAlike)),
        (mixed) => {
          // A label holding only the inserted letter is one script: anything else is mixed.
          const at = mixed.lastIndexOf('@');
          const parts = [mixed.slice(0, at), ...mixed.slice(at + 1).split('.')];
          const mixedPart = parts.some(
            (part) => /\p{Script=Latin}/u.test(part) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(part),
          );
          fc.pre(mixedPart);
          expect(checkEmail(mixed)).toEqual({ ok: false, problem: EMAIL_MIXED_SCRIPT_MESSAGE });
        },
      ),
      propertyRuns(300),
    );
  });

  it('is idempotent and never throws, on addresses, their variants and any string at all', () => {
    const anything = fc.oneof(
      address,
      address.chain(variantOf),
      nastyString,
      fc.string({ unit: 'binary', maxLength: 60 }).map((s) => `${s}@example.com`),
    );
    fc.assert(
      fc.property(anything, (input) => {
        const checked = checkEmail(input);
        if (!checked.ok) return;
        expect(canonicalEmail(checked.canonical)).toBe(checked.canonical);
        // What is stored to show back is itself a spelling of the same account.
        expect(canonicalEmail(checked.email)).toBe(checked.canonical);
        expect(checked.canonical.length).toBeLessThanOrEqual(254);
        expect(checked.email.length).toBeLessThanOrEqual(254);
      }),
      propertyRuns(2000),
    );
  });

  it('answers from memory exactly as checkEmail does, for inputs of any length, valid or refused, asked in any order', () => {
    const anything = fc.oneof(
      address,
      address.chain(variantOf),
      nastyString,
      fc.string({ maxLength: 400 }).map((s) => `${s}@example.com`),
    );
    const expected = (input: string) => {
      const checked = checkEmail(input);
      return checked.ok ? checked.canonical : null;
    };
    fc.assert(
      fc.property(fc.array(anything, { minLength: 1, maxLength: 20 }), (inputs) => {
        // Each input twice, the second time after the others: remembered answers must not mix.
        for (const input of [...inputs, ...inputs.reverse()]) expect(canonicalEmail(input)).toBe(expected(input));
      }),
      propertyRuns(300),
    );
  });
});

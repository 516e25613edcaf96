import { domainToASCII, domainToUnicode } from 'node:url';

import fc from 'fast-check';

/**
 * fast-check generators of email addresses and of other spellings of them: what one person
 * may type for one address, and what a look-alike attacker may try.
 */

const LETTERS = [...'abcdefghijklmnopqrstuvwxyz', '\u00e9', '\u00fc', '\u00f1', '\u00f8', '\u00e5', '\u00e7', '\u00df'];
const letter = fc.constantFrom(...LETTERS);
const word = fc
  .array(fc.oneof(letter, fc.constantFrom(...'0123456789')), { minLength: 0, maxLength: 6 })
  .chain((rest) => letter.map((first) => first + rest.join('')));
const localPart = fc
  .array(word, { minLength: 1, maxLength: 3 })
  .chain((words) => fc.constantFrom('.', '_', '-', '+').map((sep) => words.join(sep)));
const domain = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 2 }), fc.constantFrom('com', 'org', 'de', 'net'))
  .map(([labels, tld]) => [...labels, tld].join('.'));
/** A well-formed address in Latin script, some letters outside ASCII. */
export const address = fc.tuple(localPart, domain).map(([local, host]) => `${local}@${host}`);

export const INVISIBLES = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u00ad',
  '\u202e',
  '\u202a',
  '\u2066',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\u2060',
  '\u180e',
  '\u0000',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u034f',
  '\ufe0f',
  '\u3164',
];

// A case change that lower-casing undoes exactly ("ß" upper-cases to "SS": another address).
const flipCase = (c: string) => (c.toUpperCase().toLowerCase() === c ? c.toUpperCase() : c);
const fullwidth = (c: string) => (c >= '!' && c <= '~' ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c);

/** Spellings that should be the same account: per-character case and width, normalisation, domain form, spaces. */
export const variantOf = (email: string): fc.Arbitrary<string> =>
  fc
    .record({
      chars: fc.array(fc.constantFrom('same', 'case', 'fullwidth', 'both'), {
        minLength: email.length,
        maxLength: email.length,
      }),
      form: fc.constantFrom('NFC', 'NFD', 'NFKC', 'NFKD', 'none'),
      host: fc.constantFrom('as-is', 'ascii', 'unicode'),
      pad: fc.constantFrom('', ' ', '  ', '\t'),
    })
    .map(({ chars, form, host, pad }) => {
      const at = email.lastIndexOf('@');
      const local = email.slice(0, at);
      const domainPart = email.slice(at + 1);
      const withHost = `${local}@${host === 'ascii' ? domainToASCII(domainPart) : host === 'unicode' ? domainToUnicode(domainToASCII(domainPart)) : domainPart}`;
      const changed = [...withHost]
        .map((c, i) => {
          const how = chars[i] ?? 'same';
          if (how === 'case') return flipCase(c);
          if (how === 'fullwidth') return fullwidth(c);
          if (how === 'both') return fullwidth(flipCase(c));
          return c;
        })
        .join('');
      return pad + (form === 'none' ? changed : changed.normalize(form)) + pad;
    });

/** `email` with one more character inside it (not at either end, where trimming would take it away). */
export const withInserted = (email: string, extra: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.integer({ min: 1, max: email.length - 1 }), extra)
    .map(([at, c]) => email.slice(0, at) + c + email.slice(at));

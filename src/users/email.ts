import { domainToASCII, domainToUnicode } from 'node:url';

import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { isEmail, ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { LRUCache } from 'lru-cache';

export const EMAIL_MAX_LENGTH = 254;

/**
 * Characters an address must not hold anywhere, because they are not seen or move what is:
 * controls, format characters (zero-width space and joiners, soft hyphen, bidirectional
 * marks, overrides and isolates, the byte order mark), lone surrogates, private-use and
 * unassigned code points, line and paragraph separators, the other default-ignorables
 * (variation selectors, Hangul fillers, the combining grapheme joiner) and any whitespace.
 * Unlike names, no script needs ZWJ/ZWNJ in an address, so they are refused too.
 */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{White_Space}]/u;

/** Scripts with letters that pass for one another (а/a, ο/o, с/c): never mixed in one part. */
const LOOK_ALIKE_SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u];

export const EMAIL_UNSEEN_MESSAGE =
  'email must not contain control characters, line breaks, bidirectional overrides or invisible characters';
export const EMAIL_MIXED_SCRIPT_MESSAGE =
  'email must not mix Latin, Cyrillic or Greek letters in its local part or in one label of its domain';
export const EMAIL_DOMAIN_MESSAGE = 'email must have a valid (internationalised) domain name';
export const EMAIL_CANONICAL_LENGTH_MESSAGE = `email must be at most ${EMAIL_MAX_LENGTH} characters with its domain in ASCII (IDNA) form`;
export const EMAIL_FORMAT_MESSAGE = 'email must be an email';

export type EmailCheck =
  /**
   * `canonical` identifies the account. `email` is the address to show and to write to: the
   * local part as written (NFKC, case kept: a mail server may tell cases apart) and the
   * domain in Unicode, lower-cased (readable, and safe to show once mixed scripts are refused).
   */
  { ok: true; email: string; canonical: string } | { ok: false; problem: string };

/**
 * The one place that decides whether two spellings are the same account. The canonical
 * form is NFKC (fullwidth letters, ligatures and other compatibility forms are look-alikes
 * of the plain ones, which NFC would keep apart), the local part lower-cased, and the
 * domain as UTS #46 maps it to ASCII. Lower-casing rather than full case folding: folding
 * turns "ß" into "ss", which in a domain names another registration (UTS #46 keeps ß).
 * Canonicalising a canonical form gives it back unchanged.
 */
export function checkEmail(input: string): EmailCheck {
  const written = input.trim();
  if (UNSEEN.test(written)) return refused(EMAIL_UNSEEN_MESSAGE);
  // NFKC first on the whole address: a fullwidth "＠" or "．" is a look-alike of the real one.
  const compatible = written.normalize('NFKC');
  if (UNSEEN.test(compatible)) return refused(EMAIL_UNSEEN_MESSAGE);
  const at = compatible.lastIndexOf('@');
  if (at <= 0 || at === compatible.length - 1) return refused(EMAIL_FORMAT_MESSAGE);
  const local = lowerCase(compatible.slice(0, at));
  // The domain is left to UTS #46, which has its own case mapping ("ẞ" becomes "ss" there, not "ß").
  const domain = domainToASCII(compatible.slice(at + 1));
  if (!domain) return refused(EMAIL_DOMAIN_MESSAGE);
  // Checked in Unicode form, so that a look-alike sent already as "xn--…" is caught too.
  if (mixesScripts(local) || domainToUnicode(domain).split('.').some(mixesScripts))
    return refused(EMAIL_MIXED_SCRIPT_MESSAGE);
  const canonical = `${local}@${domain}`;
  if (canonical.length > EMAIL_MAX_LENGTH) return refused(EMAIL_CANONICAL_LENGTH_MESSAGE);
  if (!isEmail(canonical)) return refused(EMAIL_FORMAT_MESSAGE);
  const email = `${compatible.slice(0, at)}@${domainToUnicode(domain)}`;
  if (email.length > EMAIL_MAX_LENGTH) return refused(EMAIL_CANONICAL_LENGTH_MESSAGE);
  return { ok: true, email, canonical };
}

/** Inputs longer than this are canonicalised every time, so that the memory below stays small. */
const REMEMBERED_INPUT_MAX_LENGTH = 320;

/**
 * The canonical forms of the addresses canonicalised lately (false: refused). Basic sign-in
 * canonicalises the email of every request, and NFKC, IDNA both ways and validator's isEmail
 * would be the largest part of that path's own work. checkEmail is a pure
 * function, so its answer can be remembered; least recently used inputs go first.
 */
const canonicalForms = new LRUCache<string, string | false>({ max: 1000 });

/** The canonical form of an address, or null when the address is refused. */
export function canonicalEmail(input: string): string | null {
  const remembered = canonicalForms.get(input);
  if (remembered !== undefined) return remembered || null;
  const checked = checkEmail(input);
  const canonical = checked.ok ? checked.canonical : null;
  if (input.length <= REMEMBERED_INPUT_MAX_LENGTH) canonicalForms.set(input, canonical ?? false);
  return canonical;
}

/**
 * An address `checkEmail` accepts; the message says why one is refused. Anything but a
 * string passes, for IsString to refuse with its own message. Documented as an email of at
 * most EMAIL_MAX_LENGTH characters, which the plugin cannot read from a custom validator or a
 * bound written as a named constant.
 */
export const IsAccountEmail = (options?: ValidationOptions) =>
  applyDecorators(
    ValidateBy(
      {
        name: 'isAccountEmail',
        validator: {
          validate: (value: unknown) => typeof value !== 'string' || checkEmail(value).ok,
          defaultMessage: ({ value }: ValidationArguments) => {
            const checked = typeof value === 'string' ? checkEmail(value) : null;
            return checked && !checked.ok ? checked.problem.replace(/^email/, '$property') : EMAIL_FORMAT_MESSAGE;
          },
        },
      },
      options,
    ),
    ApiProperty({ format: 'email', maxLength: EMAIL_MAX_LENGTH }),
  );

const refused = (problem: string): EmailCheck => ({ ok: false, problem });

// Lower-casing can leave a string that NFKC changes again: repeat until stable (one or two
// rounds in practice; bounded so that no input can keep it busy).
function lowerCase(text: string): string {
  let current = text;
  for (let round = 0; round < 4; round++) {
    const next = current.toLowerCase().normalize('NFKC');
    if (next === current) break;
    current = next;
  }
  return current;
}

function mixesScripts(part: string): boolean {
  return LOOK_ALIKE_SCRIPTS.filter((script) => script.test(part)).length > 1;
}

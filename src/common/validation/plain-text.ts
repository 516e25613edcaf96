import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * Characters that change how text is shown without being seen: controls (CR/LF and tab
 * included, which would forge lines in logs and lists), the line and paragraph separators,
 * the interlinear annotation marks, and every default-ignorable code point (Unicode's own list
 * of what renders as nothing: bidirectional marks, overrides and isolates, which reorder what
 * follows; zero-width spaces, the soft hyphen, the word joiner, Hangul fillers, the tag
 * characters that can carry hidden text, the byte order mark).
 *
 * Kept from that list: the zero-width non-joiner and joiner (U+200C, U+200D), which Persian,
 * Hindi and other scripts need inside words and emoji sequences are built with, and the
 * variation selectors, which pick an emoji's or an ideograph's form.
 */
const INVISIBLE_CLASS = String.raw`\p{Cc}\p{Zl}\p{Zp}\uFFF9-\uFFFB[\p{Default_Ignorable_Code_Point}--[\u200C\u200D\uFE00-\uFE0F\u{E0100}-\u{E01EF}]]`;
// The joiners and selectors in the class are subtracted from it, not matched as a sequence.
// eslint-disable-next-line no-misleading-character-class
const VISIBLE_ONLY = new RegExp(`^[^${INVISIBLE_CLASS}]*$`, 'v');
// eslint-disable-next-line no-misleading-character-class
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]`, 'gv');

/** Whether `text` is one line of text whose characters are all shown as they are (the rule below). */
export const isPlainText = (text: string): boolean => VISIBLE_ONLY.test(text);

/**
 * `text` with each character the rule refuses written as its `\uXXXX` escape, so that text
 * stored before the rule (or by a path that missed it) cannot forge lines, colour or reorder a
 * terminal. Inside a JSON document the escape is JSON's own: the value read back is the same.
 */
export const escapeInvisible = (text: string): string =>
  text.replace(INVISIBLE, (char) =>
    // Each UTF-16 unit: a tag character (U+E0041) is the pair \uDB40\uDC41, as JSON writes it.
    Array.from(
      { length: char.length },
      (_, i) => `\\u${char.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`,
    ).join(''),
  );

/** The rule, as the API documentation states it. */
export const PLAIN_TEXT_RULE =
  'One line of visible text: no control characters (tabs and line breaks included), bidirectional overrides or invisible characters.';

/**
 * A name or description: one line of text whose characters are all shown as they are.
 * Anything but a string passes, for IsString to refuse with its own message. The field's
 * schema states the rule after `description`, which replaces what its JSDoc would say (a
 * decorator's description wins over the plugin's): a string, or with `each` a list of them.
 */
export const IsPlainText = ({ description, ...options }: ValidationOptions & { description?: string } = {}) =>
  applyDecorators(
    ValidateBy(
      {
        name: 'isPlainText',
        validator: {
          validate: (value: unknown) => typeof value !== 'string' || isPlainText(value),
          defaultMessage: () =>
            '$property must not contain control characters, line breaks, bidirectional overrides or invisible characters',
        },
      },
      options,
    ),
    ApiProperty({
      type: options.each ? [String] : 'string',
      description: description === undefined ? PLAIN_TEXT_RULE : `${description} ${PLAIN_TEXT_RULE}`,
    }),
  );

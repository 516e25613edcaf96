import { type FieldError, MAX_LISTED_ERRORS } from '../problem/problem';

/**
 * How deep a body or parameter may nest. The deepest input any route declares is 3 levels
 * (a planet's physicalProperties.temperature.min); 32 leaves room for growth while keeping
 * the recursive walks of class-transformer and class-validator far from the stack's end
 * (a 64 KiB body can nest about 32,000 levels).
 */
export const MAX_JSON_DEPTH = 32;

/**
 * How many members an object, and items an array, may have. The largest any route declares
 * are 50 (a planet's satellites, a key's CIDRs); past these bounds a body is refused whole,
 * before class-transformer, whose copy of one object grows faster than its member count (a
 * 64 KiB body holds some 6,600 members).
 */
export const MAX_OBJECT_MEMBERS = 100;
export const MAX_ARRAY_ITEMS = 100;

/**
 * Names every object inherits, and `prototype`. class-transformer skips a key whose name
 * resolves to a function on the DTO instance, and Nest strips `prototype`, so such a key
 * never reached the unknown-field check and was dropped without a word. No DTO declares
 * one, so each is an unknown field.
 */
const isInheritedName = (key: string): boolean => key in Object.prototype || key === 'prototype';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be taken as text, or undefined when it can. */
function textProblem(value: string, field: string): string | undefined {
  // PostgreSQL cannot store U+0000 in text columns.
  if (value.includes('\u0000')) return `${field} must not contain NUL characters`;
  // A lone surrogate is not Unicode: it would be stored as U+FFFD (silently changed), and
  // some validators (encodeURI in isEmail) throw on it.
  if (LONE_SURROGATE.test(value)) return `${field} must be valid Unicode text (it contains a lone surrogate)`;
  return undefined;
}

const join = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;

/**
 * What is wrong with a parsed body or parameter before any DTO sees it: nesting past
 * MAX_JSON_DEPTH (reported once, on the top-level field that holds it), objects and arrays
 * past MAX_OBJECT_MEMBERS and MAX_ARRAY_ITEMS (not looked into), keys named like
 * Object.prototype members, and strings that are not text. Iterative, with an explicit
 * stack: input of any depth is looked at without recursion. The walk ends once it has found
 * more errors than a problem lists (MAX_LISTED_ERRORS): the rest would not be shown.
 */
export function jsonShapeErrors(value: unknown, rootPath: string): FieldError[] {
  const errors: FieldError[] = [];
  const tooDeep = new Set<string>();
  const stack: { value: unknown; path: string; depth: number; top: string }[] = [
    { value, path: rootPath, depth: 0, top: rootPath },
  ];
  while (stack.length > 0 && errors.length <= MAX_LISTED_ERRORS) {
    const { value: current, path, depth, top } = stack.pop()!;
    if (typeof current === 'string') {
      const message = textProblem(current, path);
      if (message) errors.push({ field: path, message });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      // One error for the whole subtree; deeper levels are not looked at.
      const field = top || 'body';
      if (!tooDeep.has(field))
        errors.push({ field, message: `${field} is nested more than ${MAX_JSON_DEPTH} levels deep` });
      tooDeep.add(field);
      continue;
    }
    const field = path || 'body';
    if (Array.isArray(current) && current.length > MAX_ARRAY_ITEMS) {
      errors.push({ field, message: `${field} must not have more than ${MAX_ARRAY_ITEMS} items` });
      continue;
    }
    const keys = Array.isArray(current) ? undefined : Object.keys(current);
    if (keys && keys.length > MAX_OBJECT_MEMBERS) {
      errors.push({ field, message: `${field} must not have more than ${MAX_OBJECT_MEMBERS} fields` });
      continue;
    }
    const entries: [string | number, unknown][] = Array.isArray(current)
      ? current.map((v, i) => [i, v])
      : keys!.map((key) => [key, (current as Record<string, unknown>)[key]]);
    for (const [key, child] of entries.reverse()) {
      const childPath = join(path, key);
      if (typeof key === 'string' && isInheritedName(key)) {
        errors.push({ field: childPath, message: `property ${key} should not exist` });
        continue;
      }
      stack.push({
        value: child,
        path: childPath,
        depth: depth + 1,
        top: depth === 0 && rootPath === '' ? childPath : top,
      });
    }
  }
  return errors;
}

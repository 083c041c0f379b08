import { z } from 'zod';

// A UTF-16 surrogate without its partner (JSON can carry one as `\ud800`, and a NUL as `\u0000`).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * STORABLE_TEXT_PATTERN is isStorableText as a JSON Schema pattern, for the published document:
 * any UTF-16 unit but NUL and surrogates, or a well-formed surrogate pair. It reads the same with
 * and without the `u` flag (validators differ), and stays linear on megabyte strings. The server
 * checks with isStorableText (one scan, no regex engine) and a unit test holds the two together.
 */
export const STORABLE_TEXT_PATTERN =
  '^(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';

/** TEXT_RULE is the message every request string that breaks the rule fails with. */
export const TEXT_RULE = 'must not contain NUL (\\u0000) or unpaired UTF-16 surrogates';

/**
 * isStorableText is the one rule for request strings: no NUL and well-formed UTF-16. PostgreSQL
 * refuses both in `text` and `jsonb` (and no syscall takes a NUL), so a string that breaks it
 * must be a 400 naming the field, before it can reach a statement shared with other requests.
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/**
 * text is the base of every request string schema (bounds and patterns chain after it). Output
 * strings need not use it: they come from storage, which already obeys the rule.
 */
export function text() {
  return z.string().refine(isStorableText, TEXT_RULE);
}

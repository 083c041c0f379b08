import { ObjectStoreError } from './types.js';

/**
 * Object keys are relative paths of ASCII segments: letters, digits and `. _ - = + , @ :`,
 * separated by single `/`. No segment starts with `.` (so `.`, `..` and the fs store's own
 * `.tmp` never name an object), no leading, trailing or doubled `/`, at most 1,024 characters.
 * The rule is the same for both back ends, so a key valid on fs is valid on S3 and means the
 * same object; `~` is left out on purpose (the fs layout marks object files with it).
 */
const SEGMENT = /^[A-Za-z0-9_=+,@:-][A-Za-z0-9._=+,@:-]*$/;
const PREFIX_TAIL = /^[A-Za-z0-9._=+,@:-]*$/;
export const MAX_KEY_LENGTH = 1024;

const invalid = (what: string, value: string, why: string) =>
  new ObjectStoreError(
    'object_key_invalid',
    `invalid object ${what} ${JSON.stringify(value)}: ${why}`,
  );

/** assertKey throws ObjectStoreError `object_key_invalid` unless key follows the key rule. */
export function assertKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw invalid('key', String(key), 'empty');
  if (key.length > MAX_KEY_LENGTH) throw invalid('key', key.slice(0, 64), 'longer than 1024');
  for (const segment of key.split('/')) {
    if (!SEGMENT.test(segment)) {
      throw invalid(
        'key',
        key,
        segment === ''
          ? 'empty segment (leading, trailing or doubled /)'
          : `bad segment ${JSON.stringify(segment)}`,
      );
    }
  }
}

/**
 * assertPrefix checks a list/delete prefix: '' (everything), whole segments each ending in `/`,
 * and an optional partial last segment (`blobs/ab` lists `blobs/ab…`). A partial segment may
 * not start with `.` either, so no prefix reaches outside the keys.
 */
export function assertPrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw invalid('prefix', String(prefix), 'not a string');
  if (prefix === '') return;
  if (prefix.length > MAX_KEY_LENGTH)
    throw invalid('prefix', prefix.slice(0, 64), 'longer than 1024');
  const segments = prefix.split('/');
  const tail = segments.pop()!;
  for (const segment of segments) {
    if (!SEGMENT.test(segment))
      throw invalid('prefix', prefix, `bad segment ${JSON.stringify(segment)}`);
  }
  if (!PREFIX_TAIL.test(tail) || tail.startsWith('.')) {
    throw invalid('prefix', prefix, `bad last segment ${JSON.stringify(tail)}`);
  }
}

/**
 * keyConflict: `key` and `other` would be an object and a "directory" of other objects at once
 * (`a/b` and `a/b/c`). File-backed S3 servers (versitygw's posix back end, MinIO) refuse that;
 * the fs store refuses it too, so a key scheme that works in development works there.
 */
export const keyConflict = (key: string, other: string) =>
  new ObjectStoreError(
    'object_key_invalid',
    `object key ${JSON.stringify(key)} conflicts with ${JSON.stringify(other)}: an object cannot also hold other objects under it`,
  );

/** isKeyInvalid tells a caller's mistake from a store failure without string matching. */
export const isKeyInvalid = (error: unknown): boolean =>
  error instanceof ObjectStoreError && error.code === 'object_key_invalid';

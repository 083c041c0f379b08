import { createHmac, randomBytes } from 'node:crypto';
import type { Keyring } from '../crypto/keyring.js';

/** How long a key is remembered; retries after that are new requests. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface IdempotencyInput {
  key: string;
  /** Method and route template, e.g. `POST /v1/pools/{name}/claims` plus the path values. */
  scope: string;
  /** The parsed request body; its canonical JSON, without secret values, is hashed. */
  body: unknown;
  /** The server's hashing key (idempotencyHashKey); absent only in tests of one process. */
  hashKey?: Buffer | undefined;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * withoutSecretValues is what "the same request" means for a body that carries secret values
 * (a claim's `secrets: {NAME: value}`): the same names, whatever the values. The values are never
 * hashed, so no dump of idempotency_keys can be searched for them (a 6-digit value was recovered
 * from an unsalted hash in seconds). A retry with the same key and names but other values is the
 * same request: it returns the same claim, and the claim takes the retry's values (a replayed
 * claim stores the request's secrets, replacing those of the same name).
 */
function withoutSecretValues(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const secrets = (body as { secrets?: unknown }).secrets;
  if (!secrets || typeof secrets !== 'object' || Array.isArray(secrets)) return body;
  return { ...body, secrets: Object.keys(secrets).sort() };
}

/** A key for processes given none (tests of one process): hashes then differ across processes. */
const processKey = randomBytes(32);

/**
 * idempotencyHashKey derives the key request hashes are made with from the keyring's current
 * key (HMAC-SHA256 of a fixed label), so every API replica with the same CUBICLE_KEYRING hashes
 * alike and the hash reveals nothing without the keyring. A keyring rotation changes it: a retry
 * that spans the rotation (within the key's 24 h) is then `409 idempotency_key_reused`.
 */
export function idempotencyHashKey(keyring: Keyring): Buffer {
  const key = keyring.keys.get(keyring.currentKeyId)!;
  return createHmac('sha256', key).update('cubicle idempotency request hash v1').digest();
}

/**
 * requestHash is the keyed hash (HMAC-SHA256, `h1:` + hex) of a request body's canonical JSON
 * with secret values left out (withoutSecretValues).
 */
export function requestHash(body: unknown, hashKey: Buffer = processKey): string {
  const mac = createHmac('sha256', hashKey).update(canonical(withoutSecretValues(body)));
  return `h1:${mac.digest('hex')}`;
}

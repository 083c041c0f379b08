import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Pure crypto for sessions, free of Next and Redis so tests run it directly.

const VERSION = 'v1';

/** newSessionId is the cookie value: 32 random bytes, the only thing the browser ever holds. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * sessionKeyId derives the Redis key suffix from the cookie: a dump of Redis does not give
 * usable cookies, and a cookie of the wrong shape never reaches Redis.
 */
export function sessionKeyId(sessionId: string): string | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return null;
  return createHash('sha256').update(sessionId).digest('hex');
}

/** seal encrypts `plaintext` with AES-256-GCM; `bindTo` (the session key id) is authenticated, so a sealed value moved to another session fails to open. */
export function seal(secret: Buffer, plaintext: string, bindTo: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  cipher.setAAD(Buffer.from(bindTo));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, body, cipher.getAuthTag()]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** unseal returns the plaintext, or null when the value was tampered with, moved, or sealed under another secret. */
export function unseal(secret: Buffer, sealed: string, bindTo: string): string | null {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== VERSION || !iv || !body || !tag) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(bindTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return null;
  }
}

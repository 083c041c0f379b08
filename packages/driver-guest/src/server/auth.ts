import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';

const OPEN_PATHS = new Set(['/healthz']);

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * A guest token known only by its SHA-256: what a sandboxed daemon keeps, so that reading its
 * memory or environment (other processes of the sandbox run as the same user) yields nothing a
 * caller could present.
 */
export interface GuestTokenDigest {
  sha256: Buffer;
}

/**
 * tokenDigestOf hashes a token given as its exact bytes (no string copy is made), then zeroes
 * them.
 */
export function tokenDigestOf(bytes: Buffer): GuestTokenDigest {
  const isLongEnough = bytes.length >= 32;
  const sha256 = createHash('sha256').update(bytes).digest();
  bytes.fill(0);
  if (!isLongEnough) throw new Error('the guest token must be at least 32 characters');
  return { sha256 };
}

/**
 * registerAuth requires `Authorization: Bearer <token>` on every route but /healthz, WebSocket
 * upgrades included (they pass through onRequest too). Both sides are hashed first so the
 * compare is constant-time whatever the presented token's length.
 */
export function registerAuth(app: FastifyInstance, token: string | GuestTokenDigest) {
  const expected = typeof token === 'string' ? digest(token) : Buffer.from(token.sha256);
  if (expected.length !== 32) throw new Error('a guest token digest is 32 bytes');
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (OPEN_PATHS.has(path)) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/i.exec(header) : null;
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      throw new AppError('unauthenticated', 'a valid bearer token is required');
    }
  });
}

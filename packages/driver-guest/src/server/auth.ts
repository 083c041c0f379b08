import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';

const OPEN_PATHS = new Set(['/healthz']);

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * registerAuth requires `Authorization: Bearer <token>` on every route but /healthz, WebSocket
 * upgrades included (they pass through onRequest too). Both sides are hashed first so the
 * compare is constant-time whatever the presented token's length.
 */
export function registerAuth(app: FastifyInstance, token: string) {
  const expected = digest(token);
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

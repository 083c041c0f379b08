import { resolveReplayLink, authorizeReplayRead, type ReplayLinkDeps } from '@cubicle/viewer';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';
import type { Authenticate } from '../auth/authenticate.js';

const BEARER = /^Bearer +([^\s]+) *$/i;
/** A replay link's token is a compact JWS (three base64url parts); an API key (`cbk_…`) has no dot. */
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * replayReadAuth authenticates the read-only routes of a claim's replay (its timeline, recording
 * and media): a replay link's token for the path's claim, or, for anything else, the app's API
 * key authenticator (the same 401 and rate limit as every route). Give it to `route()` only for
 * GET routes of one claim: the token stands for no API key, so the request's `auth` names the
 * link (`keyPrefix` `replay-link`) and carries no rate limit of a key.
 */
export function replayReadAuth(app: FastifyInstance, deps: ReplayLinkDeps): Authenticate {
  return async (request, reply, level) => {
    const header = request.headers.authorization;
    const bearer = header ? BEARER.exec(header)?.[1] : undefined;
    if (!bearer || !JWS.test(bearer)) return app.cubicleAuthenticate!(request, reply, level);
    const link = await resolveReplayLink(deps, bearer);
    if (!link) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError('unauthenticated', 'not a valid replay link or API key');
    }
    if (link.state !== 'active') reply.header('www-authenticate', 'Bearer');
    authorizeReplayRead(link, (request.params as { id?: string }).id ?? '');
    request.auth = {
      tenantId: link.tenantId,
      apiKeyId: link.linkId,
      role: 'member',
      keyPrefix: 'replay-link',
      requestsPerMinute: 0,
    };
    request.log = request.log.child({ tenant_id: link.tenantId, replay_link_id: link.linkId });
    return request.auth;
  };
}

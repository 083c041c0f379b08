import { Routes } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { getClaimTimeline } from '@cubicle/control-plane';
import {
  listReplayLinks,
  mintReplayLink,
  resolveReplayLink,
  revokeReplayLink,
  type ReplayLinkDeps,
  type ViewerKeys,
} from '@cubicle/viewer';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';
import { replayReadAuth } from './replay-auth.js';

export interface ReplayRoutesOptions {
  keys: ViewerKeys;
  /** Public URL of the web app (`replay_url` is `<webUrl>/replay/<token>`). */
  webUrl: string;
}

/**
 * Replay routes: a claim's timeline (API key or replay link), and its replay links — minted,
 * listed and revoked with an API key, introspected with the token itself (the web app's share
 * page asks what a link grants before it renders).
 */
export const replayRoutes = routeGroup<ReplayRoutesOptions>(
  Plugin.replayRoutes,
  (app, { keys, webUrl }) => {
    const deps: ReplayLinkDeps = { db: app.connections.db, keys };
    const readAuth = replayReadAuth(app, deps);

    route(
      app,
      Routes.getClaimTimeline,
      async ({ request, params, query }) => ({
        status: 200,
        body: await getClaimTimeline(app.resources, {
          tenantId: tenantOf(request),
          claimId: params.id,
          query,
        }),
      }),
      { authenticate: readAuth },
    );

    route(app, Routes.createReplayLink, async ({ auth, params, body, reply }) => {
      // The body holds the only copy of the token: no cache may keep it.
      reply.header('cache-control', 'no-store');
      const created = await mintReplayLink(deps, {
        tenantId: auth.tenantId,
        apiKeyId: auth.apiKeyId,
        claimId: params.id,
        ttlSeconds: body.ttl_seconds,
        webUrl,
      });
      return { status: 201, body: created };
    });

    route(app, Routes.listReplayLinks, async ({ auth, params, query }) => ({
      status: 200,
      body: await listReplayLinks(deps, auth.tenantId, params.id, query),
    }));

    route(app, Routes.revokeReplayLink, async ({ auth, params }) => {
      await revokeReplayLink(deps, auth.tenantId, params.link_id);
      return { status: 204, body: null };
    });

    route(app, Routes.introspectReplayLink, async ({ body, reply }) => {
      reply.header('cache-control', 'no-store');
      const link = await resolveReplayLink(deps, body.token);
      if (!link) throw new AppError('invalid_ticket', 'not a valid replay link');
      return {
        status: 200,
        body: {
          state: link.state,
          claim_id: link.claimId,
          expires_at: link.expiresAt.toISOString(),
          embed_origins: link.embedOrigins,
        },
      };
    });
  },
);

import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, listQueryOf, ReplayLinkId } from '../common.js';
import {
  CreateReplayLinkRequest,
  IntrospectReplayLinkRequest,
  ReplayLink,
  ReplayLinkCreated,
  ReplayLinkIntrospection,
} from '../replay-link.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { ClaimTimeline, TimelineQuery } from '../timeline.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

/**
 * REPLAY_LINK_AUTH says, once for every route that takes it, what a replay link's token grants:
 * reading one claim's recording, never driving it.
 */
export const REPLAY_LINK_AUTH =
  "A replay link's token (`POST /v1/claims/{id}/replay-links`) is accepted as the bearer instead of an API key, for its own claim only: read-only, until it expires or is revoked (401 `unauthenticated`, `details.state`).";

/** The claim's replay: its timeline, and share links to the replay page (read-only). */
export const replayRoutes = {
  getClaimTimeline: defineRoute({
    operationId: 'getClaimTimeline',
    method: 'GET',
    path: claimChild('recording/timeline'),
    tag: 'replay',
    auth: 'api_key',
    summary:
      "The claim's timeline, on the video's clock: actions with their effects, runs, viewers…",
    description: `Oldest first, bounded pages (\`limit\` ≤ 1000, \`next_cursor\`). Every driving call with its ActionResult (effect, evidence, element role and name), launched windows, run starts, output lines and ends, viewer connections, handoffs, egress denials and the claim's lifecycle; \`offset_ms\` places an entry in the recording's video. Secret values never appear: run output is the run events' redacted text, typed text and set values are \`[redacted]\`, and the whole page is redacted against the claim's secrets once more. Works while the claim is active (\`is_live\`) and after it ended, for the tenant's retention. ${REPLAY_LINK_AUTH}`,
    params: ClaimPathParams,
    query: TimelineQuery,
    responses: { 200: ClaimTimeline },
    errors: [...readErrors],
  }),
  createReplayLink: defineRoute({
    operationId: 'createReplayLink',
    method: 'POST',
    path: claimChild('replay-links'),
    tag: 'replay',
    auth: 'api_key',
    summary: "Mint an expiring, revocable, read-only link to the claim's replay page",
    description:
      "The token is signed and shown once; only its id is stored. `replay_url` opens the replay page (video and timeline) without signing in, and may be framed by the tenant's allowed embed origins, as the live view. The token reads this claim's recording, its media and its timeline, nothing else, until `expires_at` or revocation; the claim may have ended.",
    params: ClaimPathParams,
    body: CreateReplayLinkRequest,
    responses: { 201: ReplayLinkCreated },
    errors: [...writeErrors],
  }),
  listReplayLinks: defineRoute({
    operationId: 'listReplayLinks',
    method: 'GET',
    path: claimChild('replay-links'),
    tag: 'replay',
    auth: 'api_key',
    summary: "List a claim's replay links (never the tokens)",
    params: ClaimPathParams,
    query: listQueryOf(ReplayLinkId),
    responses: { 200: listOf(ReplayLink) },
    errors: [...readErrors],
  }),
  revokeReplayLink: defineRoute({
    operationId: 'revokeReplayLink',
    method: 'DELETE',
    path: '/v1/replay-links/{link_id}',
    tag: 'replay',
    auth: 'api_key',
    summary: 'Revoke a replay link (idempotent); its next request is refused',
    params: z.strictObject({ link_id: ReplayLinkId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),
  introspectReplayLink: defineRoute({
    operationId: 'introspectReplayLink',
    method: 'POST',
    path: '/v1/replay/introspect',
    tag: 'replay',
    auth: 'none',
    summary:
      'What a replay link grants and whether it still does (no API key: the token is the credential)',
    description:
      "A correctly signed token answers 200 with its `state` (`active`, `expired`, `revoked`) and the tenant's embed origins; anything else is 401 `invalid_ticket`.",
    body: IntrospectReplayLinkRequest,
    responses: { 200: ReplayLinkIntrospection },
    errors: ['validation_failed', 'invalid_json', 'payload_too_large', 'invalid_ticket'],
  }),
} satisfies Record<string, RouteDef>;

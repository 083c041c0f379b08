import { ClaimPathParams } from '../claim.js';
import { ClaimEgress, EgressEventList, EgressEventListQuery } from '../egress.js';
import { defineRoute } from '../route-def.js';
import { claimChild, readErrors } from './shared.js';

/** Egress: a claim's policy and the connections its sandbox was refused. */
export const egressRoutes = {
  getClaimEgress: defineRoute({
    operationId: 'getClaimEgress',
    method: 'GET',
    path: claimChild('egress'),
    tag: 'claims',
    auth: 'api_key',
    summary: "A claim's egress: its narrowing, the effective policy and destinations with counts",
    description:
      "`effective` is the policy the claim's sandbox lives under: its pool's `egress` (or the installation default) narrowed by the claim's `egress`, with the operator's ranges. `destinations` sums the claim's reported connections per destination and rule (denied, and allowed when the egress point reports them).",
    params: ClaimPathParams,
    responses: { 200: ClaimEgress },
    errors: [...readErrors],
  }),
  listEgressEvents: defineRoute({
    operationId: 'listEgressEvents',
    method: 'GET',
    path: claimChild('egress-events'),
    tag: 'claims',
    auth: 'api_key',
    summary: "A claim's `egress.denied` events, newest first",
    description:
      'One line per destination, rule and minute: a retry loop is one line with a `count` (which grows while its minute lasts). Each line names the rule that denied it, e.g. `pool.deny[2]: *.ads.example`, `default:none`, `operator:private-ranges`.',
    params: ClaimPathParams,
    query: EgressEventListQuery,
    responses: { 200: EgressEventList },
    errors: [...readErrors],
  }),
  streamEgressEvents: defineRoute({
    operationId: 'streamEgressEvents',
    method: 'GET',
    path: claimChild('egress-events/stream'),
    tag: 'claims',
    auth: 'api_key',
    summary: "A claim's `egress.denied` events live as Server-Sent Events",
    description:
      'Each frame is `event: egress.denied`, `id: <event id>`, `data: <EgressEvent JSON>`; a line whose count grows is sent again with the same id. The stream ends with `event: end` once the claim is released (at once for a released claim). Nothing is replayed: read `GET /v1/claims/{id}/egress-events` for what came before.',
    params: ClaimPathParams,
    responses: { 200: null },
    errors: [...readErrors],
  }),
};

import { ClaimPathParams } from '../claim.js';
import { listOf } from '../common.js';
import {
  CreateHandoffRequest,
  Handoff,
  HandoffCreated,
  HandoffListQuery,
  HandoffPathParams,
  ReturnHandoffRequest,
} from '../handoff.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

/** Handoffs: an agent hands its desktop to a human with a lease on control, and gets it back. */
export const handoffRoutes = {
  requestHandoff: defineRoute({
    operationId: 'requestHandoff',
    method: 'POST',
    path: claimChild('handoffs'),
    tag: 'handoffs',
    auth: 'api_key',
    summary: 'Hand the desktop to a human (the agent stops driving until it comes back)',
    description:
      "The claim's agent asks a human to take over (a login, a CAPTCHA, a decision it must not take). While the handoff is `active` the claim's driving calls (act, input, shell, file writes and deletes, window launch and close, new runs, run stdin) are 409 `handoff_active`; reads still work. The claim's TTL and idle timeout do not end it meanwhile (its hard maximum does), and what was left of its TTL is given back on return. The answer carries a `control` viewer ticket bound to the handoff, shown once: its stream forwards keys and pointer, each input renews the lease. Control comes back at `POST …/handoffs/{handoff_id}/return` or when the lease expires. One active handoff per claim: a second is 409 `handoff_active`.",
    params: ClaimPathParams,
    body: CreateHandoffRequest,
    responses: { 201: HandoffCreated },
    errors: [...writeErrors, 'claim_not_active', 'handoff_active'],
  }),
  listHandoffs: defineRoute({
    operationId: 'listHandoffs',
    method: 'GET',
    path: claimChild('handoffs'),
    tag: 'handoffs',
    auth: 'api_key',
    summary: "List a claim's handoffs, newest first (`?state=active` for the one in progress)",
    params: ClaimPathParams,
    query: HandoffListQuery,
    responses: { 200: listOf(Handoff) },
    errors: [...readErrors],
  }),
  getHandoff: defineRoute({
    operationId: 'getHandoff',
    method: 'GET',
    path: claimChild('handoffs/{handoff_id}'),
    tag: 'handoffs',
    auth: 'api_key',
    summary: 'Get a handoff (its state, and the note once returned)',
    params: HandoffPathParams,
    responses: { 200: Handoff },
    errors: [...readErrors],
  }),
  returnHandoff: defineRoute({
    operationId: 'returnHandoff',
    method: 'POST',
    path: claimChild('handoffs/{handoff_id}/return'),
    tag: 'handoffs',
    auth: 'api_key',
    summary: 'Give the desktop back to the agent, with a note',
    description:
      "Ends an active handoff: the handoff's control tickets are revoked (open control streams close with 4004), the agent's driving calls work again and the note is in the handoff (and the `claim.handoff_returned` webhook). Returning an ended handoff answers it as it is (idempotent).",
    params: HandoffPathParams,
    body: ReturnHandoffRequest,
    responses: { 200: Handoff },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;

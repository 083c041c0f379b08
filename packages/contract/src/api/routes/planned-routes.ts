import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, RunId } from '../common.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { CreateRunRequest, Run, RunEvent } from '../run.js';
import { claimChild, IdempotencyHeaders, readErrors, writeErrors } from './shared.js';

/** Runs: in the contract, not yet served (see README status). Secrets: secret-routes.ts. */
export const ticketSecretRunRoutes = {
  createRun: defineRoute({
    operationId: 'createRun',
    method: 'POST',
    path: claimChild('runs'),
    tag: 'runs',
    auth: 'api_key',
    summary: 'Start an agent run in the claimed sandbox with chosen secrets',
    params: ClaimPathParams,
    headers: IdempotencyHeaders,
    body: CreateRunRequest,
    responses: { 202: Run },
    errors: [...writeErrors, 'claim_not_active', 'idempotency_key_reused'],
  }),
  getRun: defineRoute({
    operationId: 'getRun',
    method: 'GET',
    path: '/v1/runs/{run_id}',
    tag: 'runs',
    auth: 'api_key',
    summary: 'Get a run',
    params: z.strictObject({ run_id: RunId }),
    responses: { 200: Run },
    errors: [...readErrors],
  }),
  listRunEvents: defineRoute({
    operationId: 'listRunEvents',
    method: 'GET',
    path: '/v1/runs/{run_id}/events',
    tag: 'runs',
    auth: 'api_key',
    summary: "A run's events in order (secret values redacted)",
    params: z.strictObject({ run_id: RunId }),
    query: z.strictObject({
      after_seq: z.coerce.number().int().min(0).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(200),
    }),
    responses: { 200: listOf(RunEvent) },
    errors: [...readErrors],
  }),
} satisfies Record<string, RouteDef>;

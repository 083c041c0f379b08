import {
  Claim,
  ClaimListQuery,
  ClaimPathParams,
  CreateClaimRequest,
  UpdateClaimRequest,
} from '../claim.js';
import { listOf } from '../common.js';
import { PoolPathParams } from '../pool.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { claimChild, IdempotencyHeaders, readErrors, writeErrors } from './shared.js';

/** Claims: take, read, keep alive, extend, release. */
export const claimRoutes = {
  createClaim: defineRoute({
    operationId: 'createClaim',
    method: 'POST',
    path: '/v1/pools/{name}/claims',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Claim a sandbox from a pool',
    description:
      '201 with an active claim when a sandbox is ready (warm, or provisioned within `wait_seconds`); 202 with a pending claim otherwise (poll `GET /v1/claims/{id}`). A live claim with the same `name` is returned as is (reconnect). With `Idempotency-Key`, a retry with the same body returns the same claim; a different body is 409 `idempotency_key_reused`.',
    params: PoolPathParams,
    headers: IdempotencyHeaders,
    body: CreateClaimRequest,
    responses: { 200: Claim, 201: Claim, 202: Claim },
    errors: [
      ...writeErrors,
      'secret_not_usable',
      'quota_exceeded',
      'idempotency_key_reused',
      'idempotency_in_progress',
      'gone',
    ],
  }),
  listClaims: defineRoute({
    operationId: 'listClaims',
    method: 'GET',
    path: '/v1/claims',
    tag: 'claims',
    auth: 'api_key',
    summary: 'List claims',
    query: ClaimListQuery,
    responses: { 200: listOf(Claim) },
    errors: [...readErrors],
  }),
  getClaim: defineRoute({
    operationId: 'getClaim',
    method: 'GET',
    path: '/v1/claims/{id}',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Get a claim',
    params: ClaimPathParams,
    responses: { 200: Claim },
    errors: [...readErrors],
  }),
  heartbeatClaim: defineRoute({
    operationId: 'heartbeatClaim',
    method: 'POST',
    path: claimChild('heartbeat'),
    tag: 'claims',
    auth: 'api_key',
    summary: 'Record a heartbeat (keeps an idle-timeout claim alive)',
    params: ClaimPathParams,
    responses: { 200: Claim },
    errors: [...writeErrors, 'claim_not_active'],
  }),
  updateClaim: defineRoute({
    operationId: 'updateClaim',
    method: 'PATCH',
    path: '/v1/claims/{id}',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Extend the TTL, up to the maximum lifetime',
    params: ClaimPathParams,
    body: UpdateClaimRequest,
    responses: { 200: Claim },
    errors: [...writeErrors, 'claim_not_active'],
  }),
  releaseClaim: defineRoute({
    operationId: 'releaseClaim',
    method: 'DELETE',
    path: '/v1/claims/{id}',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Release a claim; its sandbox is destroyed and never reused',
    params: ClaimPathParams,
    responses: { 200: Claim },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;

import { listOf, listQueryOf, PoolId } from '../common.js';
import { Pool, PoolPathParams, PoolSpec } from '../pool.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { readErrors, writeErrors } from './shared.js';

/** Named warm pools, applied declaratively. */
export const poolRoutes = {
  listPools: defineRoute({
    operationId: 'listPools',
    method: 'GET',
    path: '/v1/pools',
    tag: 'pools',
    auth: 'api_key',
    summary: 'List pools with live sandbox counts',
    query: listQueryOf(PoolId),
    responses: { 200: listOf(Pool) },
    errors: [...readErrors],
  }),
  getPool: defineRoute({
    operationId: 'getPool',
    method: 'GET',
    path: '/v1/pools/{name}',
    tag: 'pools',
    auth: 'api_key',
    summary: 'Get one pool with live sandbox counts',
    params: PoolPathParams,
    responses: { 200: Pool },
    errors: [...readErrors],
  }),
  applyPool: defineRoute({
    operationId: 'applyPool',
    method: 'PUT',
    path: '/v1/pools/{name}',
    tag: 'pools',
    auth: 'api_key',
    summary: 'Create or update a pool declaratively',
    description:
      'Idempotent. Changing image, resources or env bumps the generation and rolls warm sandboxes; claimed ones are untouched.',
    params: PoolPathParams,
    body: PoolSpec,
    responses: { 200: Pool, 201: Pool },
    errors: [...writeErrors, 'quota_exceeded', 'conflict'],
  }),
  deletePool: defineRoute({
    operationId: 'deletePool',
    method: 'DELETE',
    path: '/v1/pools/{name}',
    tag: 'pools',
    auth: 'api_key',
    summary: 'Drain and delete a pool: live claims run to their end, warm sandboxes are destroyed',
    params: PoolPathParams,
    responses: { 202: Pool },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;

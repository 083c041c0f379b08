import { z } from 'zod';
import { ApiKeyId, ListQuery, listOf } from '../common.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { ApiKey, ApiKeyCreated, CreateApiKeyRequest } from '../tenant.js';
import { readErrors, writeErrors } from './shared.js';

/** The tenant's API keys (admin only). */
export const apiKeyRoutes = {
  listApiKeys: defineRoute({
    operationId: 'listApiKeys',
    method: 'GET',
    path: '/v1/api-keys',
    tag: 'api-keys',
    auth: 'admin',
    summary: "List the tenant's API keys (prefixes only)",
    query: ListQuery,
    responses: { 200: listOf(ApiKey) },
    errors: [...readErrors, 'forbidden'],
  }),
  createApiKey: defineRoute({
    operationId: 'createApiKey',
    method: 'POST',
    path: '/v1/api-keys',
    tag: 'api-keys',
    auth: 'admin',
    summary: 'Create an API key; the key is shown in this response only',
    body: CreateApiKeyRequest,
    responses: { 201: ApiKeyCreated },
    errors: [...writeErrors],
  }),
  revokeApiKey: defineRoute({
    operationId: 'revokeApiKey',
    method: 'DELETE',
    path: '/v1/api-keys/{id}',
    tag: 'api-keys',
    auth: 'admin',
    summary: 'Revoke an API key',
    params: z.strictObject({ id: ApiKeyId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;

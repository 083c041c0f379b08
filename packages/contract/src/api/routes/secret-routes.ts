import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, SecretId } from '../common.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import {
  CreateSecretRequest,
  CreateStoredSecretRequest,
  PutStoredSecretRequest,
  SecretNamePathParams,
  SecretRef,
  StoredSecret,
} from '../secret.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

/**
 * Secrets: per-claim (delivered into the claimed desktop as files) and tenant-level stored
 * (versioned, referenced by name). Write-only: no call ever returns a value.
 */
export const secretRoutes = {
  createSecret: defineRoute({
    operationId: 'createSecret',
    method: 'POST',
    path: claimChild('secrets'),
    tag: 'secrets',
    auth: 'api_key',
    summary: 'Attach a secret to a claim (write-only: its value is never returned)',
    description:
      "The value is sealed at rest and written into the claimed desktop as a file `<secrets dir>/<NAME>` (mode 0600, in a 0700 tmpfs directory of the sandbox user) before the sandbox's next guest call runs.",
    params: ClaimPathParams,
    body: CreateSecretRequest,
    responses: { 201: SecretRef },
    errors: [...writeErrors, 'already_exists', 'claim_not_active'],
  }),
  listSecrets: defineRoute({
    operationId: 'listSecrets',
    method: 'GET',
    path: claimChild('secrets'),
    tag: 'secrets',
    auth: 'api_key',
    summary: "List a claim's secrets by name",
    params: ClaimPathParams,
    responses: { 200: listOf(SecretRef) },
    errors: [...readErrors],
  }),
  deleteSecret: defineRoute({
    operationId: 'deleteSecret',
    method: 'DELETE',
    path: claimChild('secrets/{secret_id}'),
    tag: 'secrets',
    auth: 'api_key',
    summary: 'Delete a secret',
    description: "Its file is removed from the desktop before the sandbox's next guest call runs.",
    params: z.strictObject({ id: ClaimPathParams.shape.id, secret_id: SecretId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),

  listStoredSecrets: defineRoute({
    operationId: 'listStoredSecrets',
    method: 'GET',
    path: '/v1/secrets',
    tag: 'secrets',
    auth: 'api_key',
    summary: "The tenant's stored secrets: names and versions, never values",
    responses: { 200: listOf(StoredSecret) },
    errors: [...readErrors],
  }),
  createStoredSecret: defineRoute({
    operationId: 'createStoredSecret',
    method: 'POST',
    path: '/v1/secrets',
    tag: 'secrets',
    auth: 'admin',
    summary: 'Write a new version of a stored secret (write-only)',
    body: CreateStoredSecretRequest,
    responses: { 201: StoredSecret },
    errors: [...writeErrors],
  }),
  putStoredSecret: defineRoute({
    operationId: 'putStoredSecret',
    method: 'PUT',
    path: '/v1/secrets/{name}',
    tag: 'secrets',
    auth: 'admin',
    summary: 'Write a new version of a stored secret (write-only)',
    params: SecretNamePathParams,
    body: PutStoredSecretRequest,
    responses: { 201: StoredSecret },
    errors: [...writeErrors],
  }),
  deleteStoredSecret: defineRoute({
    operationId: 'deleteStoredSecret',
    method: 'DELETE',
    path: '/v1/secrets/{name}',
    tag: 'secrets',
    auth: 'admin',
    summary: 'Delete a stored secret, every version',
    description:
      'Claims that already received it keep their copy until they end (delete it there too).',
    params: SecretNamePathParams,
    responses: { 204: null },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;

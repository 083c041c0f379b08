import type { V1Secret } from '@kubernetes/client-node';
import { isConflict, isNotFound, type KubeClient } from './client.js';
import {
  buildGuestSecret,
  newGuestToken,
  tokenOfSecret,
  type SandboxIdentity,
} from './guest-secret.js';
import { guestSecretName } from './names.js';

export const secretsPath = (namespace: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;

/** deleteIfPresent deletes one object; "already gone" (404) is success. */
export async function deleteIfPresent(
  client: KubeClient,
  path: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await client.request({
      method: 'DELETE',
      path,
      body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
      signal,
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** getIfPresent reads one object; undefined when it does not exist. */
export async function getIfPresent<T>(
  client: KubeClient,
  path: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.request<T>({ method: 'GET', path, signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * ensureGuestSecret returns the sandbox's guest token, creating its Secret when there is none.
 * A Secret left by a crashed provisioning run is adopted (its token is the one a surviving Pod
 * already uses); `created` tells the caller whether an existing Pod/VMI can be trusted to
 * carry this token.
 */
export async function ensureGuestSecret(
  client: KubeClient,
  namespace: string,
  identity: SandboxIdentity,
  extra: (token: string) => Record<string, string>,
  signal: AbortSignal,
): Promise<{ token: string; created: boolean }> {
  const path = `${secretsPath(namespace)}/${guestSecretName(identity.sandboxId)}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await getIfPresent<V1Secret>(client, path, signal);
    if (existing) {
      const token = tokenOfSecret(existing);
      if (token && !existing.metadata?.deletionTimestamp) return { token, created: false };
      // Unusable (no token, or on its way out): replace it.
      await deleteIfPresent(client, path, signal);
    }
    const token = newGuestToken();
    try {
      await client.request({
        method: 'POST',
        path: secretsPath(namespace),
        body: buildGuestSecret(identity, namespace, token, extra(token)),
        signal,
      });
      return { token, created: true };
    } catch (err) {
      // Someone (a concurrent run of the same job) created it first: read theirs.
      if (isConflict(err)) continue;
      // An API error may echo the request; the token must not reach logs or failure reasons.
      if (err instanceof Error) err.message = err.message.replaceAll(token, '[redacted]');
      throw err;
    }
  }
  throw new Error(`could not create or adopt Secret ${path}`);
}

import { isConflict, isNotFound, type ApiOptions, type KubeClient } from './client.js';
import {
  buildGuestSecret,
  newGuestToken,
  tokenOfSecret,
  type SandboxIdentity,
} from './guest-secret.js';
import { guestSecretName } from './names.js';

/** Deletions let the garbage collector remove dependents in the background. */
export const BACKGROUND = 'Background';

/** deleteIfPresent deletes one object; "already gone" (404) is success. */
export async function deleteIfPresent(
  client: KubeClient,
  what: string,
  del: (options: ApiOptions) => Promise<unknown>,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await client.call(`delete ${what}`, del, { signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** getIfPresent reads one object; undefined when it does not exist. */
export async function getIfPresent<T>(
  client: KubeClient,
  what: string,
  read: (options: ApiOptions) => Promise<T>,
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.call(`read ${what}`, read, { signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** deleteGuestSecret deletes a sandbox's Secret; absent is fine. */
export const deleteGuestSecret = (
  client: KubeClient,
  namespace: string,
  sandboxId: string,
  signal?: AbortSignal,
) => {
  const name = guestSecretName(sandboxId);
  return deleteIfPresent(
    client,
    `Secret ${name}`,
    (o) =>
      client.core.deleteNamespacedSecret({ name, namespace, propagationPolicy: BACKGROUND }, o),
    signal,
  );
};

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
  const name = guestSecretName(identity.sandboxId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await getIfPresent(
      client,
      `Secret ${name}`,
      (o) => client.core.readNamespacedSecret({ name, namespace }, o),
      signal,
    );
    if (existing) {
      const token = tokenOfSecret(existing);
      if (token && !existing.metadata?.deletionTimestamp) return { token, created: false };
      // Unusable (no token, or on its way out): replace it.
      await deleteGuestSecret(client, namespace, identity.sandboxId, signal);
    }
    const token = newGuestToken();
    try {
      await client.call(
        `create Secret ${name}`,
        (o) =>
          client.core.createNamespacedSecret(
            { namespace, body: buildGuestSecret(identity, namespace, token, extra(token)) },
            o,
          ),
        { signal },
      );
      return { token, created: true };
    } catch (err) {
      // Someone (a concurrent run of the same job) created it first: read theirs.
      if (isConflict(err)) continue;
      // An API error may echo the request; the token must not reach logs or failure reasons.
      if (err instanceof Error) err.message = err.message.replaceAll(token, '[redacted]');
      throw err;
    }
  }
  throw new Error(`could not create or adopt Secret ${namespace}/${name}`);
}

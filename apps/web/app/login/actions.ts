'use server';

import { redirect } from 'next/navigation';
import { ApiError, cubicleFor } from '../../lib/api/http';
import type { ActionState } from '../../lib/api/client';
import { endSession, startSession } from '../../lib/session/current';

/**
 * signIn checks the key against the API, learns its role, and starts a server-side session: the
 * browser gets a random session id, the key stays in Redis, sealed.
 */
export async function signIn(_prev: ActionState, form: FormData): Promise<ActionState> {
  const key = String(form.get('api_key') ?? '').trim();
  if (key.length < 8 || key.length > 500 || /\s/.test(key))
    return { ok: false, error: 'Paste a whole API key (it starts with cbk_).' };
  let role: 'admin' | 'member';
  let tenantName: string | null = null;
  const cubicle = cubicleFor(key);
  try {
    await cubicle.request('listPools', { query: { limit: 1 } });
    // Listing keys is admin-only: its answer tells the key's role without another endpoint.
    role = await cubicle
      .request('listApiKeys', { query: { limit: 1 } })
      .then(() => 'admin' as const)
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 403) return 'member' as const;
        throw error;
      });
    tenantName = await cubicle.tenant.get().then(
      (tenant) => tenant.name,
      () => null,
    );
  } catch (error) {
    if (error instanceof ApiError && error.status === 401)
      return { ok: false, error: 'This key is not valid or was revoked.' };
    return { ok: false, error: 'The API cannot be reached; try again in a moment.' };
  }
  await startSession({
    apiKey: key,
    keyPrefix: key.slice(0, 12),
    role,
    tenantName,
    createdAt: new Date().toISOString(),
  });
  redirect('/pools');
}

/** signOut deletes the server-side session, then the cookie. */
export async function signOut(): Promise<void> {
  await endSession();
  redirect('/login');
}

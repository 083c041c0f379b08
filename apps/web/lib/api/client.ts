import 'server-only';
import type { Cubicle } from '@cubicle/sdk';
import { redirect, unstable_rethrow } from 'next/navigation';
import { ApiError, cubicleFor } from './http';
import type { SessionData } from '../session/store';

export { ApiError, cubicleFor } from './http';

/**
 * api runs SDK calls as the signed-in user: `await api(session, (c) => c.pools.get(name))`. A 401
 * means the key was revoked or expired: the session is ended and the user sent to sign in.
 */
export async function api<T>(
  session: SessionData,
  call: (cubicle: Cubicle) => Promise<T>,
): Promise<T> {
  try {
    return await call(cubicleFor(session.apiKey));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) redirect('/session-expired');
    throw error;
  }
}

/** ActionState is what a form's server action returns to the page. */
export type ActionState = { ok: true; message?: string } | { ok: false; error: string } | null;

/** failure turns any error of an action into a message for the form (API error codes kept, internals hidden). */
export function failure(error: unknown): { ok: false; error: string } {
  // Next's redirect/notFound are thrown; they must pass through the action's catch.
  unstable_rethrow(error);
  if (error instanceof ApiError) return { ok: false, error: `${error.message} (${error.code})` };
  return { ok: false, error: 'Something went wrong; try again.' };
}

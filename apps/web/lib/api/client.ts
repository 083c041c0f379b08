import 'server-only';
import { redirect, unstable_rethrow } from 'next/navigation';
import { ApiError, errorOf, rawCall, type CallOptions } from './http';
import type { SessionData } from '../session/store';

export { ApiError, type CallOptions } from './http';

/**
 * api calls the API as the signed-in user and returns the parsed JSON (undefined for 204). A 401
 * means the key was revoked or expired: the session is ended and the user sent to sign in.
 */
export async function api<T>(
  session: SessionData,
  path: string,
  options: CallOptions = {},
): Promise<T> {
  const response = await rawCall(session.apiKey, path, options);
  if (response.status === 401 && !options.isSignIn) redirect('/session-expired');
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** ActionState is what a form's server action returns to the page. */
export type ActionState = { ok: true; message?: string } | { ok: false; error: string } | null;

/** failure turns any error of an action into a message for the form (ApiError codes kept, internals hidden). */
export function failure(error: unknown): { ok: false; error: string } {
  // Next's redirect/notFound are thrown; they must pass through the action's catch.
  unstable_rethrow(error);
  if (error instanceof ApiError) return { ok: false, error: `${error.message} (${error.code})` };
  return { ok: false, error: 'Something went wrong; try again.' };
}

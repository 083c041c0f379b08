'use server';

import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

export type CreateKeyState =
  { ok: true; key: string; name: string } | { ok: false; error: string } | null;

/** createKey makes a key; its secret is returned to the form once and never stored by the dashboard. */
export async function createKey(_prev: CreateKeyState, form: FormData): Promise<CreateKeyState> {
  const session = await requireSession();
  const role = form.get('role') === 'admin' ? 'admin' : 'member';
  try {
    const created = await api(session, (c) =>
      c.apiKeys.create({ name: String(form.get('name') ?? '').trim(), role }),
    );
    revalidatePath('/api-keys');
    return { ok: true, key: created.key, name: created.name };
  } catch (error) {
    return failure(error);
  }
}

/** revokeKey revokes a key at once (the API's key cache notwithstanding, within its TTL). */
export async function revokeKey(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const id = String(form.get('key'));
  if (!/^key_[0-9a-hjkmnp-tv-z]{26}$/.test(id)) return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.apiKeys.revoke(id));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/api-keys');
  return { ok: true, message: 'Revoked' };
}

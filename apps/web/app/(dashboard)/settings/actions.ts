'use server';

import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

/** saveEmbedOrigins replaces the tenant's allowed embedding origins (one per line). */
export async function saveEmbedOrigins(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const origins = String(form.get('origins') ?? '')
    .split(/\s+/)
    .map((line) => line.trim())
    .filter(Boolean);
  try {
    await api(session, (c) => c.tenant.update({ embed_origins: origins }));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/settings');
  return { ok: true, message: 'Saved' };
}

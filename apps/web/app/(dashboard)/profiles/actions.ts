'use server';

import { ProfileName } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

/** deleteProfile deletes a profile no claim holds, with every stored version. */
export async function deleteProfile(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const id = ProfileName.safeParse(form.get('id'));
  if (!id.success) return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.request('deleteProfile', { params: { id: id.data } }));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/profiles');
  return { ok: true, message: 'Deleted' };
}

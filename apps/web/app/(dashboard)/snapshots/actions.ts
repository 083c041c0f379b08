'use server';

import { SnapshotId } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

/** deleteSnapshot deletes a snapshot's stored files and its row; forks already made keep theirs. */
export async function deleteSnapshot(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const id = SnapshotId.safeParse(form.get('id'));
  if (!id.success) return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.request('deleteSnapshot', { params: { id: id.data } }));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/snapshots');
  return { ok: true, message: 'Deleted' };
}

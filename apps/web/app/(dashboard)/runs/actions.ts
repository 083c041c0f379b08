'use server';

import { RunId } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

/** cancelRun asks the run to stop: SIGINT to its process group, SIGKILL after 5 s. */
export async function cancelRun(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const runId = RunId.safeParse(form.get('run'));
  if (!runId.success) return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.runs.cancel(runId.data, { grace_seconds: 5 }));
  } catch (error) {
    return failure(error);
  }
  revalidatePath(`/runs/${runId.data}`);
  return { ok: true, message: 'Cancelling' };
}

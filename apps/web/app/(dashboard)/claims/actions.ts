'use server';

import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;

function claimIdOf(form: FormData): string {
  const id = String(form.get('claim'));
  if (!CLAIM_ID.test(id)) throw new Error('not a claim id');
  return id;
}

/** extendClaim sets the TTL to `ttl_seconds` from now (the API caps it at the claim's hard maximum). */
export async function extendClaim(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  try {
    const id = claimIdOf(form);
    await api(session, (c) => c.claims.extend(id, Number(form.get('ttl_seconds'))));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/claims', 'layout');
  return { ok: true, message: 'Extended' };
}

/** releaseClaim ends a claim; its desktop is destroyed and every viewer of it closes. */
export async function releaseClaim(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  try {
    await api(session, (c) => c.claims.release(claimIdOf(form)));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/claims', 'layout');
  return { ok: true, message: 'Released' };
}

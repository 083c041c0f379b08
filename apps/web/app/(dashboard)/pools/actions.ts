'use server';

import type { Claim } from '@cubicle/sdk';
import { revalidatePath } from 'next/cache';
import { redirect } from 'next/navigation';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

/**
 * updateAutoscaling changes a pool's min/initial/max. PUT takes the whole spec, so the rest is
 * sent back as the API described it (an unchanged template does not roll warm sandboxes).
 */
export async function updateAutoscaling(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const name = String(form.get('pool'));
  const numberOf = (field: string) => Number(form.get(field));
  try {
    const pool = await api(session, (c) => c.pools.get(name));
    await api(session, (c) =>
      c.pools.apply(name, {
        image: pool.image,
        backend: pool.backend,
        cpu: pool.cpu,
        memory_mb: pool.memory_mb,
        autoscaling: { min: numberOf('min'), initial: numberOf('initial'), max: numberOf('max') },
        claim_ttl_seconds: pool.claim_ttl_seconds,
        max_claim_lifetime_seconds: pool.max_claim_lifetime_seconds,
        idle_timeout_seconds: pool.idle_timeout_seconds,
        env: pool.env,
        kubernetes: pool.kubernetes,
      }),
    );
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/pools');
  return { ok: true, message: 'Saved' };
}

/** claimFromPool claims a desktop (waiting up to 30 s for one) and opens it. */
export async function claimFromPool(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const name = String(form.get('pool'));
  let claim: Claim;
  try {
    claim = (
      await api(session, (c) =>
        c.claims.create(name, { wait_seconds: 30, metadata: { source: 'dashboard' } }),
      )
    ).data;
  } catch (error) {
    return failure(error);
  }
  redirect(`/claims/${claim.id}`);
}

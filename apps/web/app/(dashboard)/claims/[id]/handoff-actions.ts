'use server';

import type { Handoff } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { api, failure } from '../../../../lib/api/client';
import { introspectTicket, streamUrlOf } from '../../../../lib/api/viewer';
import { requireSession } from '../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;
const HANDOFF_ID = /^hof_[0-9a-hjkmnp-tv-z]{26}$/;
/** The human's control ticket lives as long as a session could; the handoff's end revokes it. */
const CONTROL_TTL_SECONDS = 3600;

/** activeHandoff is the claim's handoff in progress, or null (the banner polls it). */
export async function activeHandoff(claimId: string): Promise<Handoff | null> {
  const session = await requireSession();
  if (!CLAIM_ID.test(claimId)) return null;
  try {
    const page = await api(session, (c) =>
      c.request('listHandoffs', { params: { id: claimId }, query: { state: 'active', limit: 1 } }),
    );
    return page.data[0] ?? null;
  } catch {
    return null;
  }
}

export type TakeOver =
  { ok: true; streamUrl: string; ticketId: string } | { ok: false; error: string };

/**
 * takeOver mints this operator's control ticket for the handoff (server-side, with the session's
 * key): its stream forwards keyboard and pointer while the handoff is active, and each input
 * renews the handoff's lease.
 */
export async function takeOver(claimId: string, handoffId: string): Promise<TakeOver> {
  const session = await requireSession();
  if (!CLAIM_ID.test(claimId) || !HANDOFF_ID.test(handoffId))
    return { ok: false, error: 'bad request' };
  try {
    const created = await api(session, (c) =>
      c.viewerTickets.create(claimId, {
        mode: 'control',
        handoff_id: handoffId,
        ttl_seconds: CONTROL_TTL_SECONDS,
      }),
    );
    const info = await introspectTicket(created.ticket);
    if (info.state !== 'active') return { ok: false, error: `the ticket is ${info.state}` };
    return { ok: true, streamUrl: streamUrlOf(info, created.ticket), ticketId: created.id };
  } catch (error) {
    return failure(error);
  }
}

/** giveBack returns the handoff to the agent with the operator's note. */
export async function giveBack(
  claimId: string,
  handoffId: string,
  note: string,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const session = await requireSession();
  if (!CLAIM_ID.test(claimId) || !HANDOFF_ID.test(handoffId))
    return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) =>
      c.request('returnHandoff', {
        params: { id: claimId, handoff_id: handoffId },
        body: note.trim() ? { note: note.slice(0, 4000) } : {},
      }),
    );
  } catch (error) {
    return failure(error);
  }
  revalidatePath(`/claims/${claimId}`);
  return { ok: true };
}

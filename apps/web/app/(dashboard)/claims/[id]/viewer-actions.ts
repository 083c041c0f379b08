'use server';

import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../../lib/api/client';
import { introspectTicket, streamUrlOf } from '../../../../lib/api/viewer';
import { requireSession } from '../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;
const TICKET_ID = /^vtk_[0-9a-hjkmnp-tv-z]{26}$/;
/** Dashboard live views get short tickets; a new one is minted whenever the operator reconnects. */
const LIVE_VIEW_TTL_SECONDS = 900;

export type LiveView =
  | { ok: true; streamUrl: string; ticketId: string; expiresAt: string; mode: 'view' | 'control' }
  | { ok: false; error: string };

/**
 * startLiveView mints a ticket for this operator's live view, server-side with the session's key,
 * and returns only what the browser needs to open the stream.
 */
export async function startLiveView(claimId: string, mode: 'view' | 'control'): Promise<LiveView> {
  const session = await requireSession();
  if (!CLAIM_ID.test(claimId) || (mode !== 'view' && mode !== 'control'))
    return { ok: false, error: 'bad request' };
  try {
    const created = await api(session, (c) =>
      c.viewerTickets.create(claimId, { mode, ttl_seconds: LIVE_VIEW_TTL_SECONDS }),
    );
    const info = await introspectTicket(created.ticket);
    if (info.state !== 'active') return { ok: false, error: `the ticket is ${info.state}` };
    return {
      ok: true,
      streamUrl: streamUrlOf(info, created.ticket),
      ticketId: created.id,
      expiresAt: created.expires_at,
      mode: created.mode,
    };
  } catch (error) {
    return failure(error);
  }
}

export type EmbedLinkState =
  | { ok: true; viewerUrl: string; embedHtml: string; expiresAt: string }
  | { ok: false; error: string }
  | null;

/** createEmbedLink mints a view-only ticket for an iframe; the link is shown once. */
export async function createEmbedLink(
  _prev: EmbedLinkState,
  form: FormData,
): Promise<EmbedLinkState> {
  const session = await requireSession();
  const claimId = String(form.get('claim'));
  if (!CLAIM_ID.test(claimId)) return { ok: false, error: 'bad request' };
  try {
    const created = await api(session, (c) =>
      c.viewerTickets.create(claimId, {
        mode: 'view',
        ttl_seconds: Number(form.get('ttl_seconds')) || 3600,
      }),
    );
    revalidatePath(`/claims/${claimId}`);
    return {
      ok: true,
      viewerUrl: created.viewer_url,
      embedHtml: created.embed_html,
      expiresAt: created.expires_at,
    };
  } catch (error) {
    return failure(error);
  }
}

/** revokeTicket revokes a viewer ticket; its open streams close within a second. */
export async function revokeTicket(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const ticketId = String(form.get('ticket'));
  if (!TICKET_ID.test(ticketId)) return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.viewerTickets.revoke(ticketId));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/claims/[id]', 'page');
  return { ok: true, message: 'Revoked' };
}

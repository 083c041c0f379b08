'use server';

import { ReplayLinkCreated } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { getEnv } from '../../../../../lib/env';
import { requireSession } from '../../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;
const LINK_ID = /^rpl_[0-9a-hjkmnp-tv-z]{26}$/;

export type ShareLinkState =
  | { ok: true; replayUrl: string; embedHtml: string; expiresAt: string }
  | { ok: false; error: string }
  | null;

async function apiCall(method: string, path: string, body?: unknown): Promise<Response> {
  const session = await requireSession();
  return fetch(new URL(path, getEnv().CUBICLE_API_URL), {
    method,
    headers: {
      authorization: `Bearer ${session.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    cache: 'no-store',
  });
}

/** createShareLink mints a read-only replay link with the session's key; the URL is shown once. */
export async function createShareLink(
  _prev: ShareLinkState,
  form: FormData,
): Promise<ShareLinkState> {
  const claimId = String(form.get('claim'));
  const hours = Number(form.get('hours'));
  if (!CLAIM_ID.test(claimId) || !Number.isInteger(hours) || hours < 1 || hours > 720)
    return { ok: false, error: 'Choose between 1 and 720 hours.' };
  const res = await apiCall('POST', `/v1/claims/${claimId}/replay-links`, {
    ttl_seconds: hours * 3600,
  });
  if (res.status !== 201) return { ok: false, error: `The link was not made (${res.status}).` };
  const link = ReplayLinkCreated.parse(await res.json());
  revalidatePath(`/claims/${claimId}/replay`);
  return {
    ok: true,
    replayUrl: link.replay_url,
    embedHtml: link.embed_html,
    expiresAt: link.expires_at,
  };
}

/** revokeShareLink stops a replay link at once (the next request with it is refused). */
export async function revokeShareLink(form: FormData): Promise<void> {
  const claimId = String(form.get('claim'));
  const linkId = String(form.get('link'));
  if (!CLAIM_ID.test(claimId) || !LINK_ID.test(linkId)) return;
  await apiCall('DELETE', `/v1/replay-links/${linkId}`);
  revalidatePath(`/claims/${claimId}/replay`);
}

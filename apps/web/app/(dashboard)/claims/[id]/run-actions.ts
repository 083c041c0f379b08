'use server';

import { revalidatePath } from 'next/cache';
import { api, failure } from '../../../../lib/api/client';
import { requireSession } from '../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;

export type StartRunState = { ok: true; runId: string } | { ok: false; error: string } | null;

/**
 * parseArgv reads the form's command: a JSON array of strings as is, else words split on
 * whitespace (no shell: use `/bin/sh -c …` for pipes and globs).
 */
function parseArgv(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const parsed: unknown = JSON.parse(trimmed);
    if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed;
    throw new Error('argv must be a JSON array of strings');
  }
  return trimmed.split(/\s+/).filter(Boolean);
}

/** startRun starts a run in the claim's desktop with the session's key. */
export async function startRun(_prev: StartRunState, form: FormData): Promise<StartRunState> {
  const session = await requireSession();
  const claimId = String(form.get('claim') ?? '');
  if (!CLAIM_ID.test(claimId)) return { ok: false, error: 'bad request' };
  let argv: string[];
  try {
    argv = parseArgv(String(form.get('argv') ?? ''));
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  const secrets = form.getAll('secret').map(String);
  const timeout = Number(form.get('timeout_seconds') || 600);
  try {
    const run = await api(session, (c) =>
      c.runs.create(claimId, { argv, secrets, timeout_seconds: timeout }),
    );
    revalidatePath(`/claims/${claimId}`);
    return { ok: true, runId: run.id };
  } catch (error) {
    return failure(error);
  }
}

'use client';

import { useActionState } from 'react';
import { createShareLink, type ShareLinkState } from './share-actions';

/** ShareForm mints a replay link and shows it once (only its id is kept). */
export function ShareForm({ claimId }: { claimId: string }) {
  const [state, action, isPending] = useActionState<ShareLinkState, FormData>(
    createShareLink,
    null,
  );
  return (
    <form action={action} className="row" style={{ alignItems: 'end' }} data-testid="share-form">
      <input type="hidden" name="claim" value={claimId} />
      <label>
        Valid for (hours)
        <input name="hours" type="number" min={1} max={720} defaultValue={24} />
      </label>
      <button type="submit" className="primary" disabled={isPending}>
        {isPending ? 'Making…' : 'Create share link'}
      </button>
      {state?.ok === false ? <p className="alert">{state.error}</p> : null}
      {state?.ok ? (
        <div style={{ width: '100%' }}>
          <p className="muted">
            Shown once; anyone with it can watch this replay until it expires.
          </p>
          <input
            readOnly
            value={state.replayUrl}
            data-testid="share-url"
            style={{ width: '100%' }}
          />
          <textarea readOnly value={state.embedHtml} rows={3} style={{ width: '100%' }} />
        </div>
      ) : null}
    </form>
  );
}

'use client';

import { useActionState } from 'react';
import { createEmbedLink } from './viewer-actions';

/** EmbedLinkForm mints a view-only ticket for an iframe and shows the link and markup once. */
export function EmbedLinkForm({ claimId }: { claimId: string }) {
  const [state, run, isPending] = useActionState(createEmbedLink, null);
  return (
    <div className="card">
      <form action={run} className="inline">
        <input type="hidden" name="claim" value={claimId} />
        <label style={{ flexDirection: 'row', alignItems: 'center', gap: '0.4rem' }}>
          Embed link valid for
          <input type="number" name="ttl_seconds" min={10} max={86400} defaultValue={3600} />s
        </label>
        <button type="submit" disabled={isPending}>
          {isPending ? 'Creating…' : 'Create view-only embed link'}
        </button>
      </form>
      {state && !state.ok ? (
        <p role="alert" className="error">
          {state.error}
        </p>
      ) : null}
      {state?.ok ? (
        <div className="notice" style={{ marginTop: '0.75rem' }}>
          <p>Shown once. Anyone with this link can watch until {state.expiresAt}:</p>
          <code className="secret" data-testid="viewer-url">
            {state.viewerUrl}
          </code>
          <p>Embed:</p>
          <code className="secret">{state.embedHtml}</code>
        </div>
      ) : null}
    </div>
  );
}

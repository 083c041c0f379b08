'use client';

import { useActionState } from 'react';
import { createWebhook, rotateSecret, type SecretState } from './actions';

/** ShownSecret shows a signing secret once, with the note that it is not shown again. */
function ShownSecret({ state }: { state: SecretState }) {
  if (!state) return null;
  if (!state.ok)
    return (
      <span role="alert" className="error">
        {state.error}
      </span>
    );
  return (
    <div className="notice" style={{ marginTop: '0.5rem' }}>
      <p>
        Signing secret of <span className="mono">{state.url}</span>. Copy it now: it will not be
        shown again.
      </p>
      <code className="secret" data-testid="webhook-secret">
        {state.secret}
      </code>
    </div>
  );
}

/** CreateWebhookForm adds an endpoint: URL, events (the contract's, given by the page), description. */
export function CreateWebhookForm({ eventTypes }: { eventTypes: readonly string[] }) {
  const [state, run, isPending] = useActionState(createWebhook, null);
  return (
    <div className="card">
      <form action={run} className="row" aria-label="Add endpoint">
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/hooks/cubicle"
          aria-label="Endpoint URL"
          style={{ flex: 1 }}
        />
        {eventTypes.map((event) => (
          <label key={event} className="mono">
            <input type="checkbox" name="event" value={event} /> {event}
          </label>
        ))}
        <input
          name="description"
          maxLength={500}
          placeholder="Description"
          aria-label="Description"
        />
        <button type="submit" className="primary" disabled={isPending}>
          {isPending ? 'Adding…' : 'Add endpoint'}
        </button>
      </form>
      <ShownSecret state={state} />
    </div>
  );
}

/** RotateSecretForm makes a new signing secret for one endpoint and shows it once. */
export function RotateSecretForm({ webhookId, url }: { webhookId: string; url: string }) {
  const [state, run, isPending] = useActionState(rotateSecret, null);
  return (
    <form
      action={run}
      onSubmit={(event) => {
        if (
          !window.confirm(`Rotate the signing secret of ${url}? The old one signs for 24 h more.`)
        )
          event.preventDefault();
      }}
    >
      <input type="hidden" name="webhook" value={webhookId} />
      <button type="submit" disabled={isPending}>
        {isPending ? 'Rotating…' : 'Rotate secret'}
      </button>
      <ShownSecret state={state} />
    </form>
  );
}

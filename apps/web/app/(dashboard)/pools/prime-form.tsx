'use client';

import type { Pool } from '@cubicle/contract/api';
import { useActionState } from 'react';
import { updatePrime } from './actions';

/**
 * PrimeForm shows and edits the apps a pool's warm desktops have open before a claim takes them
 * (`prime`), as the JSON the API takes: `{"apps": [{"app": "browser", "url": "…"}]}`, empty for
 * none. Saving rolls the warm desktops (a new generation). A refusal names the field the API
 * named (`prime.apps.0.url: …`) under the box, tied to it for screen readers.
 */
export function PrimeForm({ pool }: { pool: Pick<Pool, 'name' | 'prime'> }) {
  const [state, run, isPending] = useActionState(updatePrime, null);
  const errorId = `${pool.name}-prime-error`;
  const shown = pool.prime
    ? JSON.stringify(
        { apps: pool.prime.apps, timeout_seconds: pool.prime.timeout_seconds },
        null,
        1,
      )
    : '';
  return (
    <form action={run} className="prime" aria-label={`Prime of ${pool.name}`}>
      <input type="hidden" name="pool" value={pool.name} />
      <textarea
        name="prime"
        rows={3}
        cols={36}
        className="mono"
        spellCheck={false}
        placeholder='{"apps": [{"app": "browser", "url": "https://…"}]}'
        defaultValue={state?.value ?? shown}
        aria-label={`Prime apps of ${pool.name} (JSON)`}
        aria-invalid={state && !state.ok ? true : undefined}
        aria-describedby={state && !state.ok ? errorId : undefined}
      />
      <button type="submit" disabled={isPending}>
        {isPending ? 'Saving…' : 'Save prime'}
      </button>
      {state && !state.ok ? (
        <span id={errorId} role="alert" className="error field-error">
          {state.error}
        </span>
      ) : null}
      {state?.ok ? <span className="ok">{state.message}</span> : null}
    </form>
  );
}

/** PrimeSummary says in one line what a pool's desktops have open: `browser (page) · terminal`. */
export function PrimeSummary({ prime }: { prime: Pool['prime'] }) {
  if (!prime) return <span className="muted">not primed</span>;
  return (
    <span data-prime={prime.apps.map((a) => a.app).join(' ')}>
      primed:{' '}
      {prime.apps.map((a, i) => (
        <span key={a.app}>
          {i > 0 ? ' · ' : ''}
          <strong>{a.app}</strong>
          {a.url ? <span className="mono"> ({a.url})</span> : null}
        </span>
      ))}
    </span>
  );
}

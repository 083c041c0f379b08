'use client';

import { useActionState } from 'react';
import { createKey } from './actions';

export function CreateKeyForm() {
  const [state, run, isPending] = useActionState(createKey, null);
  return (
    <div className="card">
      <form action={run} className="inline">
        <input name="name" required maxLength={200} placeholder="Key name" aria-label="Key name" />
        <select name="role" defaultValue="member" aria-label="Role">
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
        <button type="submit" className="primary" disabled={isPending}>
          {isPending ? 'Creating…' : 'Create key'}
        </button>
      </form>
      {state && !state.ok ? (
        <p role="alert" className="error">
          {state.error}
        </p>
      ) : null}
      {state?.ok ? (
        <div className="notice" style={{ marginTop: '0.75rem' }}>
          <p>
            Key <strong>{state.name}</strong> created. Copy it now: it will not be shown again.
          </p>
          <code className="secret" data-testid="new-key">
            {state.key}
          </code>
        </div>
      ) : null}
    </div>
  );
}

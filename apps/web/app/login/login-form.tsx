'use client';

import { useActionState } from 'react';
import { signIn } from './actions';

export function LoginForm() {
  const [state, action, isPending] = useActionState(signIn, null);
  return (
    <form action={action} className="stack">
      <label>
        API key
        <input
          name="api_key"
          type="password"
          autoComplete="off"
          required
          placeholder="cbk_…"
          aria-label="API key"
        />
      </label>
      <button type="submit" className="primary" disabled={isPending}>
        {isPending ? 'Signing in…' : 'Sign in'}
      </button>
      {state && !state.ok ? (
        <p role="alert" className="error">
          {state.error}
        </p>
      ) : null}
    </form>
  );
}

'use client';

import { useActionState } from 'react';
import { storeSecret } from './actions';

/** StoreSecretForm writes a stored secret: name, value (a password field), who may use it. */
export function StoreSecretForm() {
  const [state, run, isPending] = useActionState(storeSecret, null);
  const fields = state && !state.ok ? state.fields : {};
  const fieldError = (name: string) =>
    fields[name] ? (
      <span id={`secret-${name}-error`} className="error field-error" role="alert">
        {fields[name]}
      </span>
    ) : null;
  const placed = Object.keys(fields).length > 0;
  return (
    <div className="card">
      <form action={run} className="inline" aria-label="Store a secret">
        <span className="field">
          <input
            name="name"
            required
            maxLength={128}
            placeholder="NAME"
            aria-label="Secret name"
            defaultValue={state && !state.ok ? state.name : ''}
            aria-invalid={fields.name ? true : undefined}
            aria-describedby={fields.name ? 'secret-name-error' : undefined}
          />
          {fieldError('name')}
        </span>
        <span className="field">
          <input
            name="value"
            type="password"
            required
            autoComplete="off"
            placeholder="value"
            aria-label="Secret value"
            aria-invalid={fields.value ? true : undefined}
            aria-describedby={fields.value ? 'secret-value-error' : undefined}
          />
          {fieldError('value')}
        </span>
        <select name="usable_by" defaultValue="admins" aria-label="Usable by">
          <option value="admins">admin keys</option>
          <option value="members">admin and member keys</option>
        </select>
        <button type="submit" className="primary" disabled={isPending}>
          {isPending ? 'Storing…' : 'Store secret'}
        </button>
        {state && !state.ok && !placed ? (
          <span role="alert" className="error">
            {state.error}
          </span>
        ) : null}
        {state?.ok ? <span className="ok">{state.message}</span> : null}
      </form>
    </div>
  );
}

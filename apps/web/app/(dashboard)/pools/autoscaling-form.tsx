'use client';

import type { Pool } from '@cubicle/contract/api';
import { useActionState } from 'react';
import { updateAutoscaling } from './actions';

const FIELDS = [
  { name: 'min', min: 0 },
  { name: 'initial', min: 0 },
  { name: 'max', min: 1 },
] as const;

/**
 * AutoscalingForm edits a pool's min/initial/max. After a save the inputs hold what was typed
 * (React resets a form after its action to the inputs' defaults, so the defaults are the values
 * sent), and a refusal shows each field's error beside that field, tied to it for screen readers.
 */
export function AutoscalingForm({ pool }: { pool: Pick<Pool, 'name' | 'autoscaling'> }) {
  const [state, run, isPending] = useActionState(updateAutoscaling, null);
  const fields = state && !state.ok ? state.fields : {};
  const unplaced = state && !state.ok && Object.keys(fields).length === 0;
  return (
    <form action={run} className="inline autoscaling" aria-label={`Autoscaling of ${pool.name}`}>
      <input type="hidden" name="pool" value={pool.name} />
      {FIELDS.map(({ name, min }) => {
        const errorId = `${pool.name}-${name}-error`;
        const error = fields[name];
        return (
          <span key={name} className="field" data-field={name}>
            <input
              type="number"
              name={name}
              min={min}
              max={1000}
              defaultValue={state?.values[name] ?? pool.autoscaling[name]}
              aria-label={`${name} of ${pool.name}`}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? errorId : undefined}
            />
            {error ? (
              <span id={errorId} className="error field-error" role="alert">
                {error}
              </span>
            ) : null}
          </span>
        );
      })}
      <button type="submit" disabled={isPending}>
        {isPending ? 'Saving…' : 'Save'}
      </button>
      {unplaced ? (
        <span role="alert" className="error">
          {state.error}
        </span>
      ) : null}
      {state?.ok ? <span className="ok">{state.message}</span> : null}
    </form>
  );
}

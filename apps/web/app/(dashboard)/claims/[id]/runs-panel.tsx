'use client';

import { useActionState, useState } from 'react';
import type { Run } from '@cubicle/contract/api';
import { startRun } from './run-actions';
import { RunEvents } from './run-events';

interface Props {
  claimId: string;
  isActive: boolean;
  runs: Run[];
  /** The claim's secret names (never values); null when they could not be listed. */
  secretNames: string[] | null;
}

/**
 * RunsPanel lists a claim's runs, follows the chosen one live, and starts new ones: a command,
 * the secrets to pass (by name), a timeout.
 */
export function RunsPanel({ claimId, isActive, runs, secretNames }: Props) {
  const [state, submit, isPending] = useActionState(startRun, null);
  const [chosen, setChosen] = useState<string | null>(runs[0]?.id ?? null);
  const shown = state?.ok ? state.runId : chosen;
  return (
    <div className="card">
      {secretNames === null ? null : (
        <p className="muted" data-testid="secret-names">
          Secrets: {secretNames.length === 0 ? 'none' : secretNames.join(', ')}
        </p>
      )}
      {isActive ? (
        <form action={submit} className="row" aria-label="Start run">
          <input type="hidden" name="claim" value={claimId} />
          <input
            name="argv"
            required
            placeholder='/bin/sh -c … or ["python3", "agent.py"]'
            aria-label="Command"
            style={{ flex: 1 }}
          />
          {(secretNames ?? []).map((name) => (
            <label key={name} className="mono">
              <input type="checkbox" name="secret" value={name} /> {name}
            </label>
          ))}
          <input
            name="timeout_seconds"
            type="number"
            min={1}
            max={86400}
            defaultValue={600}
            aria-label="Timeout (s)"
            style={{ width: '6rem' }}
          />
          <button type="submit" disabled={isPending}>
            {isPending ? 'Starting…' : 'Start run'}
          </button>
          {state && !state.ok ? (
            <span role="alert" className="error">
              {state.error}
            </span>
          ) : null}
        </form>
      ) : null}
      {runs.length === 0 && !shown ? (
        <p className="muted">No runs yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Run</th>
              <th>Command</th>
              <th>Status</th>
              <th>Exit</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} onClick={() => setChosen(r.id)} style={{ cursor: 'pointer' }}>
                <td className="mono">{r.id}</td>
                <td className="mono">{r.argv.join(' ').slice(0, 80)}</td>
                <td>
                  <span className={`badge ${r.status === 'succeeded' ? 'success' : r.status}`}>
                    {r.status}
                  </span>
                </td>
                <td className="mono">{r.exit_code ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown ? <RunEvents key={shown} claimId={claimId} runId={shown} /> : null}
    </div>
  );
}

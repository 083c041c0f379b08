import { isFinalRunStatus, type Run } from '@cubicle/contract/api';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ApiError, api } from '../../../../lib/api/client';
import { requireSession } from '../../../../lib/session/current';
import { ActionForm } from '../../../components/action-form';
import { RunEvents } from '../../claims/[id]/run-events';
import { cancelRun } from '../actions';

export const metadata = { title: 'Run · Cubicle' };

const when = (iso: string | null) => (iso ? iso.slice(0, 19).replace('T', ' ') : '—');

/** One run: what it runs, where, how it ended, and its output live (stdout and stderr apart). */
export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const session = await requireSession();
  let run: Run;
  try {
    run = await api(session, (c) => c.runs.get(runId));
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 400)) notFound();
    throw error;
  }
  return (
    <>
      <h1>
        Run <span className="mono">{run.id}</span>
      </h1>
      <div className="card">
        <div className="row">
          <div>
            <div className="muted">Claim</div>
            <Link href={`/claims/${run.claim_id}`} className="mono">
              {run.claim_id}
            </Link>
          </div>
          <div style={{ flex: 1 }}>
            <div className="muted">Command</div>
            <div className="mono" data-testid="run-argv">
              {JSON.stringify(run.argv)}
            </div>
          </div>
          <div>
            <div className="muted">Secrets</div>
            <div className="mono">{run.secret_names.join(', ') || 'none'}</div>
          </div>
          <div>
            <div className="muted">Created · started · finished (UTC)</div>
            <div className="mono">
              {when(run.created_at)} · {when(run.started_at)} · {when(run.finished_at)}
            </div>
          </div>
          {isFinalRunStatus(run.status) ? null : (
            <ActionForm
              action={cancelRun}
              submit="Cancel run"
              pending="Cancelling…"
              buttonClass="danger"
              confirm="Cancel this run? Its process group gets SIGINT, then SIGKILL after 5 s."
            >
              <input type="hidden" name="run" value={run.id} />
            </ActionForm>
          )}
        </div>
      </div>
      <h2>Output</h2>
      <RunEvents claimId={run.claim_id} runId={run.id} />
    </>
  );
}

import type { Deps } from '../resources.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { onRunFinished } from './run-finished.js';

/**
 * announceRunsFinished sends `run.finished` for every run whose end this process records (the
 * worker for most runs, the API for a queued run cancelled before it started). The run's end
 * has its own transaction in the runs module, so the event is written right after its commit.
 * Returns the function that stops it (call it on shutdown, or a rebuilt app would announce twice).
 */
export function announceRunsFinished(deps: Deps): () => void {
  return onRunFinished(async (tenantId, run) => {
    await emitWebhookEvent(deps, tenantId, 'run.finished', {
      run_id: run.id,
      claim_id: run.claim_id,
      status: run.status,
      exit_code: run.exit_code,
      reason: run.end_reason,
    });
  });
}

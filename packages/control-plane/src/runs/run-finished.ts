import type { Run } from '@cubicle/contract/api';

/** RunFinishedListener hears every run that reaches a final status, once, after it is committed. */
export type RunFinishedListener = (tenantId: string, run: Run) => void | Promise<void>;

const listeners = new Set<RunFinishedListener>();

/**
 * onRunFinished is the hook point for what follows a run's end (the `run.finished` webhook): the
 * listener is called in the process that recorded the end (the worker for most runs, the API for
 * a queued run cancelled before it started), after the commit. Listener errors are swallowed:
 * the end is already recorded. Returns a function that removes the listener.
 */
export function onRunFinished(listener: RunFinishedListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** notifyRunFinished calls every listener (see onRunFinished). */
export async function notifyRunFinished(tenantId: string, run: Run): Promise<void> {
  for (const listener of listeners) {
    try {
      await listener(tenantId, run);
    } catch {
      // The run's end is committed; a listener's failure must not undo or repeat it.
    }
  }
}

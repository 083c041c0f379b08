import { AppError } from '@cubicle/contract/errors';
import type { RunHandle } from './start-run.js';

/**
 * RunRegistry holds the runs that are still going, by run_id, so a kill request or the stream's
 * `kill` message can reach them; a run leaves it when its process exits.
 */
export class RunRegistry {
  private readonly runs = new Map<string, RunHandle>();
  private readonly reserved = new Set<string>();

  /** reserve claims a caller-chosen run_id before spawning; a duplicate is 409 `conflict`. */
  reserve(runId: string) {
    if (this.runs.has(runId) || this.reserved.has(runId)) {
      throw new AppError('conflict', `run_id ${runId} is already running`);
    }
    this.reserved.add(runId);
  }

  release(runId: string) {
    this.reserved.delete(runId);
  }

  add(handle: RunHandle) {
    this.reserved.delete(handle.runId);
    this.runs.set(handle.runId, handle);
    void handle.done.then(() => this.runs.delete(handle.runId));
  }

  get(runId: string): RunHandle | undefined {
    return this.runs.get(runId);
  }

  /** killAll ends every run (daemon shutdown) and waits for them to be gone. */
  async killAll() {
    const all = [...this.runs.values()];
    for (const run of all) run.kill('SIGKILL');
    await Promise.all(all.map((run) => run.done));
  }
}

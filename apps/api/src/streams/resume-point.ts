import { isFinalRunStatus, type RunStatus } from '@cubicle/contract/api';

/** ResumePoint is where a live stream of a run starts for one reader. */
export interface ResumePoint {
  /** Follow the run's events after this seq. */
  afterSeq: number;
  /** The reader already has the run's final status: the stream ends at once. */
  hasEnded: boolean;
}

/**
 * resumePoint reads a reader's cursor against the run. Seqs are dense and `last_seq` is the last
 * one handed out, so nobody can have seen past it: a larger cursor (a stale or made-up one, up to
 * the 2^53−1 the query allows) counts as `last_seq`. Without that, a reader past the end of an
 * ended run would wait for events that never come, and one past the end of a live run would
 * never see its final status.
 */
export function resumePoint(
  run: { status: RunStatus; last_seq: number },
  afterSeq: number,
): ResumePoint {
  const cursor = Math.min(afterSeq, run.last_seq);
  return { afterSeq: cursor, hasEnded: isFinalRunStatus(run.status) && cursor >= run.last_seq };
}

import type { ShellExit } from '@cubicle/contract/guest';
import type { RunOutcome } from './finish-run.js';

/** EndRequest is an end Cubicle asked for before the process exited. */
export type EndRequest =
  { kind: 'cancel' } | { kind: 'claim_ended'; detail: string } | { kind: 'timeout' };

/**
 * outcomeOfExit maps a process's exit to the run's end. An end Cubicle asked for names the
 * reason whatever the exit code (a program that exits 0 on SIGINT was still cancelled); else a
 * signal it did not send is `signaled`, and an exit code is `exited` (0 succeeded, else failed).
 */
export function outcomeOfExit(exit: ShellExit, requested: EndRequest | null): RunOutcome {
  const base = { exitCode: exit.exit_code, signal: exit.signal };
  if (exit.timed_out || requested?.kind === 'timeout')
    return { ...base, status: 'failed', reason: 'timeout' };
  if (requested?.kind === 'cancel') return { ...base, status: 'cancelled', reason: 'cancelled' };
  if (requested?.kind === 'claim_ended')
    return { ...base, status: 'cancelled', reason: 'claim_ended', detail: requested.detail };
  if (exit.signal) return { ...base, status: 'failed', reason: 'signaled' };
  return { ...base, status: exit.exit_code === 0 ? 'succeeded' : 'failed', reason: 'exited' };
}

/** outcomeOfLostStream is the end of a run whose guest stream closed without an exit. */
export function outcomeOfLostStream(requested: EndRequest | null): RunOutcome {
  if (requested?.kind === 'claim_ended')
    return { status: 'cancelled', reason: 'claim_ended', detail: requested.detail };
  if (requested?.kind === 'cancel') return { status: 'cancelled', reason: 'cancelled' };
  return {
    status: 'failed',
    reason: 'guest_lost',
    detail: "the sandbox's guest driver closed the stream before the process exited",
  };
}

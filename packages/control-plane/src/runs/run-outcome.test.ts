import { describe, expect, it } from 'vitest';
import { outcomeOfExit, outcomeOfLostStream } from './run-outcome.js';

const exit = (over: Partial<Parameters<typeof outcomeOfExit>[0]> = {}) => ({
  run_id: 'run_x',
  pid: 10,
  exit_code: 0 as number | null,
  signal: null as string | null,
  timed_out: false,
  killed: false,
  duration_ms: 5,
  ...over,
});

describe('run outcomes', () => {
  it('an exit names its code: 0 succeeded, else failed', () => {
    expect(outcomeOfExit(exit(), null)).toMatchObject({
      status: 'succeeded',
      reason: 'exited',
      exitCode: 0,
    });
    expect(outcomeOfExit(exit({ exit_code: 3 }), null)).toMatchObject({
      status: 'failed',
      reason: 'exited',
      exitCode: 3,
    });
  });

  it('an end Cubicle asked for wins over the exit code', () => {
    expect(outcomeOfExit(exit({ exit_code: 0 }), { kind: 'cancel' })).toMatchObject({
      status: 'cancelled',
      reason: 'cancelled',
    });
    expect(
      outcomeOfExit(exit({ exit_code: null, signal: 'SIGKILL' }), {
        kind: 'claim_ended',
        detail: 'ttl_expired',
      }),
    ).toMatchObject({
      status: 'cancelled',
      reason: 'claim_ended',
      detail: 'ttl_expired',
      signal: 'SIGKILL',
    });
    expect(
      outcomeOfExit(exit({ exit_code: null, signal: 'SIGTERM', timed_out: true }), null),
    ).toMatchObject({
      status: 'failed',
      reason: 'timeout',
    });
  });

  it('a signal nobody sent is `signaled`; a stream lost without exit is `guest_lost` unless an end was asked', () => {
    expect(outcomeOfExit(exit({ exit_code: null, signal: 'SIGSEGV' }), null)).toMatchObject({
      status: 'failed',
      reason: 'signaled',
    });
    expect(outcomeOfLostStream(null)).toMatchObject({ status: 'failed', reason: 'guest_lost' });
    expect(
      outcomeOfLostStream({ kind: 'claim_ended', detail: 'released_by_client' }),
    ).toMatchObject({
      status: 'cancelled',
      reason: 'claim_ended',
    });
  });
});

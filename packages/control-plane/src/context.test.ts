import { afterEach, describe, expect, it, vi } from 'vitest';
import { nudgeReconcile, type Deps, type Enqueue } from './context.js';

/** A queue client that records what it was asked to enqueue. */
function recordingQueue() {
  const calls: { name: string; payload: unknown; options: unknown }[] = [];
  const queues: Enqueue = {
    enqueue: async (name, payload, options) => {
      calls.push({ name, payload, options });
    },
  };
  return { calls, deps: { db: null as never, queues } satisfies Deps };
}

describe('nudgeReconcile', () => {
  it('sends one enqueue for a burst of nudges of one pool, one per pool', async () => {
    const { calls, deps } = recordingQueue();
    await Promise.all([
      ...Array.from({ length: 32 }, () => nudgeReconcile(deps, 'ten_a', 'pool_1')),
      nudgeReconcile(deps, 'ten_a', 'pool_2'),
    ]);
    expect(calls.map((c) => (c.payload as { pool_id: string }).pool_id).sort()).toEqual([
      'pool_1',
      'pool_2',
    ]);
    expect(calls[0]).toMatchObject({
      name: 'pool.reconcile',
      options: { dedupe: { id: 'reconcile-pool_1', ttlMs: 50 } },
    });
  });

  it('sends again for a nudge that comes after the previous one was sent', async () => {
    const { calls, deps } = recordingQueue();
    await nudgeReconcile(deps, 'ten_a', 'pool_1');
    await nudgeReconcile(deps, 'ten_a', 'pool_1');
    expect(calls).toHaveLength(2);
  });

  describe('timing (fake clock)', () => {
    afterEach(() => vi.useRealTimers());

    it('sends after the burst has been quiet for 20 ms, not during it', async () => {
      vi.useFakeTimers();
      const { calls, deps } = recordingQueue();
      for (let i = 0; i < 6; i++) {
        void nudgeReconcile(deps, 'ten_a', 'pool_1');
        await vi.advanceTimersByTimeAsync(10); // a claim every 10 ms for 60 ms
      }
      expect(calls).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(10); // 20 ms after the last nudge
      expect(calls).toHaveLength(1);
    });

    it('a burst that never goes quiet still sends every 100 ms', async () => {
      vi.useFakeTimers();
      const { calls, deps } = recordingQueue();
      for (let i = 0; i < 25; i++) {
        void nudgeReconcile(deps, 'ten_a', 'pool_1');
        await vi.advanceTimersByTimeAsync(10); // 250 ms of nudges, 10 ms apart
      }
      expect(calls).toHaveLength(2); // at 100 and 210 ms; the third is still waiting
      await vi.advanceTimersByTimeAsync(100);
      expect(calls).toHaveLength(3);
    });
  });

  it('swallows queue errors (the periodic sweep covers a lost nudge)', async () => {
    const deps: Deps = {
      db: null as never,
      queues: { enqueue: () => Promise.reject(new Error('redis down')) },
    };
    await expect(nudgeReconcile(deps, 'ten_a', 'pool_1')).resolves.toBeUndefined();
  });
});

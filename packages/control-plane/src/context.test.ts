import { afterEach, describe, expect, it, vi } from 'vitest';
import { nudgeReconcile, type Enqueue } from './context.js';
import { createResources, type Deps } from './resources.js';

/** A control plane whose only working part is its queue client (nudges touch nothing else). */
const resourcesWith = (queues: Enqueue): Deps =>
  createResources({
    db: null as never,
    queues,
    redis: null as never,
    prefix: 'test',
    keyring: null as never,
  });

/** A queue client that records what it was asked to enqueue. */
function recordingQueue() {
  const calls: { name: string; payload: unknown; options: unknown }[] = [];
  const queues: Enqueue = {
    enqueue: async (name, payload, options) => {
      calls.push({ name, payload, options });
    },
  };
  return { calls, queues, deps: resourcesWith(queues) };
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

    it('a burst that never goes quiet still sends 100 ms after its first nudge', async () => {
      vi.useFakeTimers();
      const { calls, deps } = recordingQueue();
      for (let i = 0; i < 10; i++) {
        void nudgeReconcile(deps, 'ten_a', 'pool_1');
        await vi.advanceTimersByTimeAsync(10); // 100 ms of nudges, 10 ms apart
      }
      expect(calls).toHaveLength(1);
    });

    it('a steady stream sends one pool at most every 500 ms, and its last nudge is not lost', async () => {
      vi.useFakeTimers();
      const t0 = Date.now();
      const sent: { pool: string; at: number }[] = [];
      const deps = resourcesWith({
        enqueue: async (_name, payload) => {
          sent.push({ pool: (payload as { pool_id: string }).pool_id, at: Date.now() - t0 });
        },
      });
      for (let i = 0; i < 30; i++) {
        void nudgeReconcile(deps, 'ten_a', 'pool_1');
        void nudgeReconcile(deps, 'ten_a', `other_${i}`); // other pools are not held back
        await vi.advanceTimersByTimeAsync(67); // 15 claims a second for 2 s
      }
      const pool1 = () => sent.filter((x) => x.pool === 'pool_1').map((x) => x.at);
      // The first after the burst's 20 quiet ms, then one per interval.
      expect(pool1()).toEqual([20, 520, 1020, 1520]);
      await vi.advanceTimersByTimeAsync(500);
      expect(pool1()).toEqual([20, 520, 1020, 1520, 2020]); // the stream's last, not dropped
      expect(sent.filter((x) => x.pool !== 'pool_1')).toHaveLength(30);
    });
  });

  it('two control planes on one queue client nudge apart (the burst state is per Resources)', async () => {
    const { calls, queues } = recordingQueue();
    const [a, b] = [resourcesWith(queues), resourcesWith(queues)];
    await Promise.all([nudgeReconcile(a, 'ten_a', 'pool_1'), nudgeReconcile(b, 'ten_a', 'pool_1')]);
    expect(calls).toHaveLength(2);
  });

  it('swallows queue errors (the periodic sweep covers a lost nudge)', async () => {
    const deps = resourcesWith({ enqueue: () => Promise.reject(new Error('redis down')) });
    await expect(nudgeReconcile(deps, 'ten_a', 'pool_1')).resolves.toBeUndefined();
  });
});

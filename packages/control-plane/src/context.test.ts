import { describe, expect, it } from 'vitest';
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

  it('swallows queue errors (the periodic sweep covers a lost nudge)', async () => {
    const deps: Deps = {
      db: null as never,
      queues: { enqueue: () => Promise.reject(new Error('redis down')) },
    };
    await expect(nudgeReconcile(deps, 'ten_a', 'pool_1')).resolves.toBeUndefined();
  });
});

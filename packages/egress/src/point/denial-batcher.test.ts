import { describe, expect, it } from 'vitest';
import { DenialBatcher, type EgressDenialBatchItem } from './denial-batcher.js';

const denial = (ip: string, at: number) => ({
  desktopId: 'd1',
  at: new Date(at),
  protocol: 'tcp' as const,
  name: null,
  ip,
  port: 443,
  rule: 'default:none',
  process: null,
});

describe('DenialBatcher', () => {
  it('collapses a destination within a batch and reports once per flush', async () => {
    const batches: EgressDenialBatchItem[][] = [];
    const batcher = new DenialBatcher((b) => void batches.push(b), { flushMs: 20 });
    for (let i = 0; i < 50; i += 1) batcher.add(denial('198.51.100.7', 1000 + i));
    batcher.add(denial('203.0.113.9', 2000));
    await new Promise((r) => setTimeout(r, 60));
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((d) => [d.ip, d.count])).toEqual([
      ['198.51.100.7', 50],
      ['203.0.113.9', 1],
    ]);
    expect(batches[0]![0]!.firstAt.getTime()).toBe(1000);
    expect(batches[0]![0]!.lastAt.getTime()).toBe(1049);
  });

  it('survives a failing reporter', async () => {
    const errors: unknown[] = [];
    const batcher = new DenialBatcher(() => Promise.reject(new Error('down')), {
      onError: (e) => errors.push(e),
    });
    batcher.add(denial('198.51.100.7', 1));
    await batcher.flush();
    expect(errors).toHaveLength(1);
  });
});

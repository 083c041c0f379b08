import { describe, expect, it } from 'vitest';
import type { AppMirror } from './app-mirror.js';
import { readUntil } from './action-latency.js';

/** A mirror as readUntil sees it: a sequence number, fences and a next-event wait, counted. */
function mirrorStub() {
  const calls = { fences: 0, waits: 0 };
  const mirror = {
    lastSeq: 0,
    fence: async () => {
      calls.fences += 1;
    },
    nextEvent: () => {
      calls.waits += 1;
      return new Promise<void>(() => undefined); // no further event comes
    },
  };
  return { mirror: mirror as unknown as AppMirror & { lastSeq: number }, calls };
}

describe('readUntil', () => {
  it('reads again at once when an event arrived while a read was out', async () => {
    const { mirror, calls } = mirrorStub();
    const values = ['wo', 'word'];
    let reads = 0;
    const read = async () => {
      const value = values[reads++] as string;
      if (value === 'wo') mirror.lastSeq += 1; // the rest of the text is announced mid-read
      return value;
    };
    const value = await readUntil(mirror, read, (v) => v === 'word', 3_000);
    expect(value).toBe('word');
    expect(reads).toBe(2);
    // Not a single wait for a next event: the one that came during the read was enough.
    expect(calls.waits).toBe(0);
    // Every read went out with its own fence.
    expect(calls.fences).toBe(2);
  });

  it('waits for the next event when nothing arrived during the read, up to the bound', async () => {
    const { mirror, calls } = mirrorStub();
    let reads = 0;
    const value = await readUntil(
      mirror,
      async () => {
        reads += 1;
        return 'wo';
      },
      (v) => v === 'word',
      30,
    );
    expect(value).toBe('wo');
    expect(calls.waits).toBeGreaterThan(0);
    expect(calls.fences).toBe(reads);
  });
});

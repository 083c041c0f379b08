import { gunzipSync } from 'node:zlib';
import { RecordingLine } from '@cubicle/contract/guest';
import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from './recorder.js';

const result = {
  effect: 'unverifiable' as const,
  route: 'xtest' as const,
  duration_ms: 3,
  retry_safe: false as const,
  delivery: { mode: 'foreground' as const },
};
const click = (x: number) => ({
  kind: 'pixel' as const,
  request: {
    action: 'click' as const,
    window_id: 7,
    screenshot_id: 'p1',
    delivery_mode: 'foreground' as const,
    x,
    y: 1,
  },
});

/** untar lists a tar's regular files (name → content) by walking its 512-byte headers. */
function untar(tar: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let off = 0; off + 512 <= tar.length;) {
    const name = tar.toString('utf8', off, off + 100).replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(tar.toString('latin1', off + 124, off + 136), 8);
    out.set(name, tar.subarray(off + 512, off + 512 + size));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

let recorder: Recorder;
afterEach(async () => recorder?.dispose());

describe('Recorder', () => {
  it('numbers concurrent entries in order and archives them with their frames', async () => {
    recorder = new Recorder();
    await expect(recorder.archive()).rejects.toMatchObject({ code: 'not_found' });
    const status = await recorder.start({ screenshots: true });
    expect(status).toMatchObject({ active: true, entry_count: 0 });
    await expect(recorder.start({ screenshots: true })).rejects.toMatchObject({ code: 'conflict' });
    const at = new Date().toISOString();
    await Promise.all([
      recorder.append({ at, window_id: 7, action: click(1), result, before: Buffer.from('b1') }),
      recorder.append({ at, window_id: 7, action: click(2), result, after: Buffer.from('a2') }),
    ]);
    expect(recorder.stop()).toMatchObject({ active: false, entry_count: 2 });
    expect(() => recorder.stop()).toThrow(/no recording/);

    const files = untar(gunzipSync(await recorder.archive()));
    expect([...files.keys()]).toEqual([
      'trajectory.jsonl',
      '000001-before.png',
      '000002-after.png',
    ]);
    const lines = files
      .get('trajectory.jsonl')!
      .toString()
      .trim()
      .split('\n')
      .map((l) => RecordingLine.parse(JSON.parse(l)));
    expect(lines.map((l) => (l.type === 'action' ? [l.seq, l.action.request] : l.type))).toEqual([
      'recording',
      [1, click(1).request],
      [2, click(2).request],
    ]);
    expect(files.get('000001-before.png')!.toString()).toBe('b1');
  });

  it('refuses an entry that does not match the schema and keeps the count', async () => {
    recorder = new Recorder();
    await recorder.start({ screenshots: false });
    const bad = { ...click(1), request: { ...click(1).request, text: 'secret' } };
    await expect(
      recorder.append({ at: new Date().toISOString(), window_id: 7, action: bad, result }),
    ).rejects.toThrow();
    expect(recorder.status().entry_count).toBe(0);
  });
});

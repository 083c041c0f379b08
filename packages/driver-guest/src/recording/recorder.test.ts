import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { RecordingLine } from '@cubicle/contract/guest';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretFiles } from '../secrets/secret-files.js';
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

  it('redacts secret values (raw, base64, URL-encoded) from the archived trajectory by name', async () => {
    const files = new SecretFiles(join(mkdtempSync(join(tmpdir(), 'rec-secrets-')), 'secrets'));
    const early = `sk-early-${Math.random().toString(36).slice(2)}/+=&`;
    const late = `sk-late-${Math.random().toString(36).slice(2)}`;
    await files.write({ secrets: [{ name: 'EARLY_TOKEN', value: early }], exclusive: false });
    recorder = new Recorder(files);
    await recorder.start({ screenshots: false });
    const typed = (text: string) => ({
      kind: 'element' as const,
      request: {
        action: 'type_text' as const,
        window_id: 7,
        element_token: 's1:2',
        delivery_mode: 'foreground' as const,
        text,
      },
    });
    const at = new Date().toISOString();
    const echoed = (text: string) => ({
      ...result,
      evidence: [
        {
          kind: 'window_change' as const,
          change: 'title_changed' as const,
          window_id: 7,
          title: text,
        },
      ],
    });
    // A plain field: the agent typed the value; the app echoed its encoded forms in a title.
    await recorder.append({
      at,
      window_id: 7,
      action: typed(early),
      result: echoed(`${Buffer.from(early).toString('base64')} ${encodeURIComponent(early)}`),
    });
    // Typed before it became a secret: only the archive can redact it.
    await recorder.append({ at, window_id: 7, action: typed(`then ${late}`), result });
    await files.write({ secrets: [{ name: 'LATE_TOKEN', value: late }], exclusive: true });
    recorder.stop();

    const trajectory = untar(gunzipSync(await recorder.archive()))
      .get('trajectory.jsonl')!
      .toString();
    for (const value of [early, late])
      for (const form of [
        value,
        Buffer.from(value).toString('base64').replace(/=+$/, ''),
        encodeURIComponent(value),
      ])
        expect(trajectory.split(form).length - 1).toBe(0);
    expect(trajectory.split('[secret:EARLY_TOKEN]').length - 1).toBe(3);
    expect(trajectory).toContain('then [secret:LATE_TOKEN]');
    // Still one valid line per entry.
    const lines = trajectory.trim().split('\n');
    expect(lines.map((l) => RecordingLine.parse(JSON.parse(l)).type)).toEqual([
      'recording',
      'action',
      'action',
    ]);
  });
});

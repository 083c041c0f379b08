import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RecordingLine, RecordingStatus, ScreenshotImage } from '@cubicle/contract/guest';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestDesktop, type GuestDesktop } from './helpers/guest-desktop.js';

let g: GuestDesktop;
beforeAll(async () => {
  g = await startGuestDesktop();
});
afterAll(async () => g?.stop());

describe('recording', () => {
  it('archives the trajectory as JSONL and PNG frames, without typed text', async () => {
    expect((await g.call('GET', '/v1/recording/archive')).status).toBe(404);
    const started = await g.call('POST', '/v1/recording/start', {});
    expect(RecordingStatus.parse(started.json)).toMatchObject({ active: true, entry_count: 0 });
    expect((await g.call('POST', '/v1/recording/start', {})).status).toBe(409);

    const f = await g.launchFixture('recorded');
    const shot = ScreenshotImage.parse(
      (await g.call('POST', '/v1/screenshot', { window_id: f.window.window_id })).json,
    );
    const secret = 'hunter2-secret';
    const common = {
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
    };
    await g.call('POST', '/v1/act/pixel', { ...common, action: 'click', x: 200, y: 60 });
    await g.call('POST', '/v1/act/pixel', {
      ...common,
      action: 'type',
      text: secret,
      focus_at: { x: 200, y: 135 },
    });
    expect(f.readLog().at(-1)).toBe(`text ${secret}`);

    const stopped = RecordingStatus.parse((await g.call('POST', '/v1/recording/stop', {})).json);
    expect(stopped).toMatchObject({ active: false, entry_count: 2 });

    const archive = await g.call('GET', '/v1/recording/archive');
    expect(archive.status).toBe(200);
    const dir = join(g.tmp, 'archive');
    mkdirSync(dir);
    const file = join(g.tmp, 'rec.tar.gz');
    execFileSync('sh', ['-c', 'cat > "$1"', 'sh', file], { input: archive.raw });
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    expect(readdirSync(dir).sort()).toEqual([
      '000001-after.png',
      '000001-before.png',
      '000002-after.png',
      '000002-before.png',
      'trajectory.jsonl',
    ]);
    const lines = readFileSync(join(dir, 'trajectory.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => RecordingLine.parse(JSON.parse(l)));
    expect(lines.map((l) => l.type)).toEqual(['recording', 'action', 'action']);
    const [, click, typed] = lines;
    expect(click).toMatchObject({ seq: 1, result: { effect: 'confirmed' } });
    expect(typed).toMatchObject({ seq: 2, redacted: ['text'], action: { request: { text: '' } } });
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.png'))) {
      const png = PNG.sync.read(readFileSync(join(dir, name)));
      expect(png.width).toBeGreaterThan(100);
    }
    // The before and after frames of the click differ: the button's label changed.
    expect(
      readFileSync(join(dir, '000001-before.png')).equals(
        readFileSync(join(dir, '000001-after.png')),
      ),
    ).toBe(false);
    expect(archive.raw.includes(Buffer.from(secret))).toBe(false);
    for (const name of readdirSync(dir))
      expect(readFileSync(join(dir, name)).includes(Buffer.from(secret))).toBe(false);
  });
});

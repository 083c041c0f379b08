// Issue 38 §1: an agent's first screenshot of a fresh desktop shows nothing it did not cause. A
// sandboxed desktop (the local backend's kind) starts with a fresh home; there fluxbox's
// first-run setup used to replace our window-manager settings with Debian's, whose wallpaper
// setter failed and left an xmessage error box on screen and in the window list.
import { request } from 'node:http';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDesktop, type DesktopSession } from '../src/desktop/start-desktop.js';

function guest(session: DesktopSession, method: 'GET' | 'POST', path: string, body?: unknown) {
  const socketPath = decodeURIComponent(session.guestUrl!.slice('http+unix://'.length));
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: `/v1${path}`,
        method,
        headers: {
          authorization: `Bearer ${session.guestToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('a fresh sandboxed desktop', () => {
  let session: DesktopSession;
  beforeAll(async () => {
    session = await startDesktop({ daemon: 'sandbox' });
    // The error box appeared a few hundred ms after the window manager took the screen.
    await new Promise((r) => setTimeout(r, 1_500));
  }, 60_000);
  afterAll(async () => {
    await session?.stop();
  });

  it('has no window in its window list', async () => {
    const { status, json } = await guest(session, 'GET', '/windows');
    expect(status).toBe(200);
    expect(json.windows).toEqual([]);
  });

  it('shows one plain background over the whole screen', async () => {
    const { status, json } = await guest(session, 'POST', '/screenshot', { format: 'png' });
    expect(status).toBe(200);
    const png = PNG.sync.read(Buffer.from(json.data as string, 'base64'));
    expect([png.width, png.height]).toEqual([json.width, json.height]);
    const colours = new Set<number>();
    for (let i = 0; i < png.data.length; i += 4) colours.add(png.data.readUInt32BE(i));
    expect(colours.size).toBe(1);
  });
});

import { Redis } from 'ioredis';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisOptionsFromUrl } from '../harness/index.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

// A tiny GTK window (Debian's python3 has gi; the one on PATH may not).
const GTK_WINDOW = [
  '/usr/bin/python3',
  '-c',
  "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; w=Gtk.Window(title='drive-e2e'); w.set_default_size(320,200); w.add(Gtk.Button(label='Press me')); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
];

/**
 * Driving a claimed sandbox end to end: REST (inject) → the sandbox's lane in Redis → the worker
 * process → the guest driver in a real desktop, with answers back over Redis pub/sub.
 */
describe('driving a claimed desktop through the API', () => {
  let s: Stack;
  let claimId: string;
  let sandboxId: string;
  const call = (
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = s.auth,
  ) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  const drive = (path: string, payload?: unknown) =>
    call(payload === undefined ? 'GET' : 'POST', `/v1/claims/${claimId}/${path}`, payload);

  beforeAll(async () => {
    s = await startStack();
    expect(
      (
        await call('PUT', '/v1/pools/drive', {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 2 },
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/drive')).json().counts.warm === 1,
      120_000,
      250,
    );
    const claim = await call('POST', '/v1/pools/drive/claims', { ttl_seconds: 900 });
    expect(claim.statusCode).toBe(201);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
  });
  afterAll(async () => s?.close());

  it('observes galculator and computes 6 × 7 by element tokens through the API', async () => {
    const launched = await drive('windows/launch', {
      argv: ['galculator'],
      env: { HOME: `/tmp/drive-galc-${sandboxId}` },
      wait_for_window_ms: 20_000,
    });
    expect(launched.statusCode).toBe(200);
    const windowId = launched.json().window.window_id as number;
    const ready = await drive('verify', {
      window_id: windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'toggle_button', name: '=' }, unique: true },
      ],
      timeout_ms: 10_000,
    });
    expect(ready.json().status).toBe('satisfied');
    const snap = await drive('observe', { window_id: windowId, include_screenshot: false });
    expect(snap.statusCode).toBe(200);
    const rows = snap.json().elements as { element_token: string; role: string; name?: string }[];
    const token = (name: string) =>
      rows.find((e) => e.role === 'toggle_button' && e.name === name)!.element_token;
    for (const key of ['6', '*', '7', '=']) {
      const res = await drive('act', {
        window_id: windowId,
        element_token: token(key),
        action: 'click',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().effect).not.toBe('refused');
    }
    const verify = await drive('verify', {
      window_id: windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'text', value: '42' }, unique: true },
      ],
      stable_samples: 2,
      timeout_ms: 5_000,
    });
    expect(verify.json()).toMatchObject({ status: 'satisfied' });
    // The API passes include_hidden through: the full tree is the lean one plus what its rows
    // count as hidden (galculator's closed menus).
    const lean = (await drive('observe', { window_id: windowId, include_screenshot: false })).json()
      .elements as { hidden_descendants?: number }[];
    const full = await drive('observe', {
      window_id: windowId,
      include_screenshot: false,
      include_hidden: true,
    });
    expect(full.statusCode).toBe(200);
    const hidden = lean.reduce((n, r) => n + (r.hidden_descendants ?? 0), 0);
    expect(hidden).toBeGreaterThan(0);
    expect(full.json().elements.length).toBe(lean.length + hidden);
    const malformed = await drive('act', {
      window_id: windowId,
      element_token: 'nonsense',
      action: 'click',
    });
    expect(malformed.statusCode).toBe(400);
    const stored = (await drive('actions')).json().data as {
      operation: string;
      request: { element_token: string };
    }[];
    expect(stored.slice(0, 4).map((a) => a.operation)).toEqual([
      'act.element',
      'act.element',
      'act.element',
      'act.element',
    ]);
    expect(stored[0]!.request.element_token).toBe(token('='));
    expect((await drive('windows/close', { window_id: windowId, force: true })).statusCode).toBe(
      200,
    );
    await drive('shell', { argv: ['rm', '-rf', `/tmp/drive-galc-${sandboxId}`] });
  });

  it('shell, files and windows round-trip through the queue', async () => {
    const echo = await drive('shell', { argv: ['echo', 'hello from the sandbox'] });
    expect(echo.statusCode).toBe(200);
    expect(echo.json()).toMatchObject({ stdout: 'hello from the sandbox\n', exit_code: 0 });

    const written = await drive('files/write', {
      path: `/tmp/drive-e2e-${sandboxId}.txt`,
      content: 'línea uno\n',
    });
    expect(written.statusCode).toBe(200);
    expect(written.json()).toMatchObject({ path: `/tmp/drive-e2e-${sandboxId}.txt`, size: 11 });
    const read = await drive('files/read', { path: `/tmp/drive-e2e-${sandboxId}.txt` });
    expect(read.json()).toMatchObject({ content: 'línea uno\n', size: 11 });
    expect(
      (await drive('files/stat', { path: `/tmp/drive-e2e-${sandboxId}.txt` })).json(),
    ).toMatchObject({ type: 'file', size: 11 });
    const missing = await drive('files/read', { path: '/tmp/no-such-file-drive-e2e' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('not_found');
    expect(
      (await drive('files/delete', { path: `/tmp/drive-e2e-${sandboxId}.txt` })).statusCode,
    ).toBe(200);

    const windows = await drive('windows');
    expect(windows.statusCode).toBe(200);
    expect(Array.isArray(windows.json().windows)).toBe(true);
    const bad = await drive('shell', { argv: ['echo'], command: 'echo both' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
  });

  it('launches an app, sees its window, screenshots it as JSON and as PNG bytes', async () => {
    const launched = await drive('windows/launch', {
      argv: GTK_WINDOW,
      wait_for_window_ms: 20_000,
    });
    expect(launched.statusCode).toBe(200);
    expect(launched.json()).toMatchObject({ window_wait: 'found', window: { title: 'drive-e2e' } });
    const windowId = launched.json().window.window_id as number;
    const listed = (await drive('windows')).json().windows as {
      window_id: number;
      title: string;
    }[];
    expect(listed.some((w) => w.window_id === windowId && w.title === 'drive-e2e')).toBe(true);

    const full = await drive('screenshot');
    expect(full.statusCode).toBe(200);
    expect(full.headers['content-type']).toBe('image/png');
    const png = PNG.sync.read(full.rawPayload);
    expect([png.width, png.height]).toEqual([1280, 800]);
    let lit = 0;
    for (let i = 0; i < png.data.length; i += 4)
      if (png.data[i]! + png.data[i + 1]! + png.data[i + 2]! > 60) lit++;
    expect(lit).toBeGreaterThan(1000); // the GTK window at least is not black

    const small = await call('GET', `/v1/claims/${claimId}/screenshot?max_dimension=640`);
    const smallPng = PNG.sync.read(small.rawPayload);
    expect([smallPng.width, smallPng.height]).toEqual([640, 400]);

    const json = await drive('screenshot', { window_id: windowId });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toMatchObject({ window_id: windowId, format: 'png', scale: 1 });
    expect(Buffer.from(json.json().data, 'base64').subarray(1, 4).toString()).toBe('PNG');

    // A click quoting an older screenshot is refused, with nothing delivered; it is stored.
    const latest = await drive('screenshot', { window_id: windowId });
    const stale = await drive('input', {
      action: 'click',
      window_id: windowId,
      screenshot_id: json.json().screenshot_id,
      x: 10,
      y: 10,
    });
    expect(stale.statusCode).toBe(200);
    expect(stale.json()).toMatchObject({
      effect: 'refused',
      retry_safe: true,
      error: { code: 'stale_screenshot' },
    });
    expect(latest.json().screenshot_id).not.toBe(json.json().screenshot_id);

    const typed = await drive('input', {
      action: 'type',
      window_id: windowId,
      screenshot_id: latest.json().screenshot_id,
      text: 'hunter2',
    });
    expect(typed.statusCode).toBe(200);
    const actions = await drive('actions');
    expect(actions.statusCode).toBe(200);
    const [newest, older] = actions.json().data;
    expect(newest).toMatchObject({
      claim_id: claimId,
      sandbox_id: sandboxId,
      operation: 'act.pixel',
      effect: typed.json().effect,
      request: { action: 'type', text: '[redacted]' },
    });
    expect(JSON.stringify(actions.json())).not.toContain('hunter2');
    expect(older).toMatchObject({
      operation: 'act.pixel',
      effect: 'refused',
      result: stale.json(),
    });
    const page = (await call('GET', `/v1/claims/${claimId}/actions?limit=1`)).json();
    expect(page.data).toHaveLength(1);
    expect(
      (await call('GET', `/v1/claims/${claimId}/actions?limit=1&cursor=${page.next_cursor}`)).json()
        .data[0].id,
    ).toBe(older.id);

    const closed = await drive('windows/close', { window_id: windowId });
    expect(closed.statusCode).toBe(200);
    expect(closed.json().effect).not.toBe('refused');
    const gone = await drive('windows/close', { window_id: windowId });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBe('window_not_found');
  });

  it('a pixel click without delivery_mode is delivered on the first try (foreground by default)', async () => {
    const launched = await drive('windows/launch', {
      argv: GTK_WINDOW,
      wait_for_window_ms: 20_000,
    });
    expect(launched.json()).toMatchObject({ window_wait: 'found' });
    const windowId = launched.json().window.window_id as number;
    const shot = (await drive('screenshot', { window_id: windowId })).json();
    // The button fills the window: its middle is a click on it.
    const click = await drive('input', {
      action: 'click',
      window_id: windowId,
      screenshot_id: shot.screenshot_id,
      x: Math.floor(shot.width / 2),
      y: Math.floor(shot.height / 2),
    });
    expect(click.statusCode).toBe(200);
    expect(click.json().effect, JSON.stringify(click.json())).not.toBe('refused');
    expect(click.json()).toMatchObject({ route: 'xtest', delivery: { mode: 'foreground' } });
    // Asking for background explicitly is still refused, nothing delivered, with the way out.
    const next = (await drive('screenshot', { window_id: windowId })).json();
    const background = await drive('input', {
      action: 'click',
      window_id: windowId,
      screenshot_id: next.screenshot_id,
      x: 5,
      y: 5,
      delivery_mode: 'background',
    });
    expect(background.json()).toMatchObject({
      effect: 'refused',
      error: { code: 'foreground_required' },
    });
    await drive('windows/close', { window_id: windowId });
  });

  it("runs a sandbox's calls one at a time in the order they were enqueued", async () => {
    // The local backend's desktops share the host's /tmp: a unique name keeps runs apart.
    const file = `/tmp/drive-order-${sandboxId}.txt`;
    const redis = new Redis({
      ...redisOptionsFromUrl(s.workerEnv.REDIS_URL!),
      maxRetriesPerRequest: null,
    });
    const lane = `${s.workerEnv.QUEUE_PREFIX!}:lanes:q:${sandboxId}`;
    // A slow first call holds the lane, so the twenty wait in it and their order can be read.
    const blocker = drive('shell', { command: 'sleep 2' });
    await waitFor(
      async () => (await redis.hlen(`${s.workerEnv.QUEUE_PREFIX!}:lanes:active`)) > 0,
      10_000,
      20,
    );
    const pending = Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        drive('shell', {
          command: `echo start-${i} >> ${file}; sleep 0.02; echo end-${i} >> ${file}; echo ${i}`,
        }),
      ),
    );
    await waitFor(async () => (await redis.llen(lane)) === 20, 10_000, 20);
    const enqueued = (await redis.lrange(lane, 0, -1)).map((raw) =>
      Number(
        /echo (\d+)$/.exec(
          (JSON.parse(raw) as { data: { request: { command: string } } }).data.request.command,
        )![1],
      ),
    );
    redis.disconnect();
    expect((await blocker).statusCode).toBe(200);
    const answers = await pending;
    answers.forEach((a, i) => expect(a.json().stdout).toBe(`${i}\n`));
    const lines = (await drive('files/read', { path: file }))
      .json()
      .content.trim()
      .split('\n') as string[];
    expect(lines).toHaveLength(40);
    const ran: number[] = [];
    for (let k = 0; k < 40; k += 2) {
      const i = Number(lines[k]!.replace('start-', ''));
      expect(lines[k + 1]).toBe(`end-${i}`); // never two at once
      ran.push(i);
    }
    // The order they ran in is the order their jobs were enqueued (read from the lane above).
    expect(enqueued).toHaveLength(20);
    expect(ran).toEqual(enqueued);
    await drive('files/delete', { path: file });
  });

  it('only the claim holder drives, and only while the claim is active', async () => {
    const foreign = await call(
      'POST',
      `/v1/claims/${claimId}/shell`,
      { argv: ['true'] },
      s.other.auth,
    );
    expect(foreign.statusCode).toBe(404);
    expect(
      (await call('GET', `/v1/claims/${claimId}/actions`, undefined, s.other.auth)).statusCode,
    ).toBe(404);
    expect(
      (await call('GET', `/v1/claims/${claimId}/screenshot`, undefined, s.other.auth)).statusCode,
    ).toBe(404);
    expect((await call('GET', `/v1/claims/${claimId}/windows`, undefined, {})).statusCode).toBe(
      401,
    );

    expect((await call('DELETE', `/v1/claims/${claimId}`)).statusCode).toBe(200);
    const after = await drive('shell', { argv: ['true'] });
    expect(after.statusCode).toBe(409);
    expect(after.json().error.code).toBe('claim_not_active');
    // The stored history outlives the claim.
    expect((await drive('actions')).json().data.length).toBeGreaterThanOrEqual(2);
  });
});

import { ActionResult, WindowLaunchResponse, WindowListResponse } from '@cubicle/contract/guest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestDesktop, type GuestDesktop } from './helpers/guest-desktop.js';

let g: GuestDesktop;
beforeAll(async () => {
  g = await startGuestDesktop();
});
afterAll(async () => g?.stop());

describe('windows', () => {
  it('launch waits for the window and the list reports its pid, title and app', async () => {
    const { window, pid } = await g.launchFixture('win-list');
    expect(window.pid).toBe(pid);
    expect(window.title).toBe('win-list');
    const res = await g.call('GET', '/v1/windows');
    expect(res.status).toBe(200);
    const { windows } = WindowListResponse.parse(res.json);
    const row = windows.find((w) => w.window_id === window.window_id);
    expect(row).toMatchObject({ pid, title: 'win-list', minimized: false });
    expect(row!.app).toMatch(/python|pixel/i);
    expect(row!.geometry.w).toBeGreaterThanOrEqual(400);
    expect(row!.geometry.h).toBeGreaterThanOrEqual(220);
  });

  it('lists windows front to back with the focused one marked', async () => {
    const a = await g.launchFixture('win-back');
    const b = await g.launchFixture('win-front');
    const { windows } = WindowListResponse.parse((await g.call('GET', '/v1/windows')).json);
    const ia = windows.findIndex((w) => w.window_id === a.window.window_id);
    const ib = windows.findIndex((w) => w.window_id === b.window.window_id);
    expect(ib).toBeLessThan(ia);
    expect(windows[ib]!.z_order).toBeGreaterThan(windows[ia]!.z_order);
    expect(windows.filter((w) => w.focused).map((w) => w.window_id)).toEqual([b.window.window_id]);
  });

  it('close is confirmed only once the window has gone', async () => {
    const { window } = await g.launchFixture('win-close');
    const res = await g.call('POST', '/v1/windows/close', { window_id: window.window_id });
    expect(res.status).toBe(200);
    const result = ActionResult.parse(res.json);
    expect(result).toMatchObject({
      effect: 'confirmed',
      route: 'window_manager',
      retry_safe: false,
    });
    expect(result.effect === 'confirmed' && result.evidence[0]).toMatchObject({
      kind: 'window_change',
      change: 'closed',
      window_id: window.window_id,
    });
    const { windows } = WindowListResponse.parse((await g.call('GET', '/v1/windows')).json);
    expect(windows.map((w) => w.window_id)).not.toContain(window.window_id);
  });

  it('says suspected_noop when the app ignores the close, and force ends its process group', async () => {
    const f = await g.launchFixture('win-sticky', { sticky: true });
    const soft = ActionResult.parse(
      (
        await g.call('POST', '/v1/windows/close', {
          window_id: f.window.window_id,
          timeout_ms: 500,
        })
      ).json,
    );
    expect(soft).toMatchObject({ effect: 'suspected_noop', retry_safe: false });
    expect(f.readLog()).toContain('close refused');
    const forced = ActionResult.parse(
      (
        await g.call('POST', '/v1/windows/close', {
          window_id: f.window.window_id,
          timeout_ms: 500,
          force: true,
        })
      ).json,
    );
    expect(forced).toMatchObject({ effect: 'confirmed', route: 'process' });
    const { windows } = WindowListResponse.parse((await g.call('GET', '/v1/windows')).json);
    expect(windows.map((w) => w.window_id)).not.toContain(f.window.window_id);
  });

  it('times out waiting for a window that never comes', async () => {
    const res = WindowLaunchResponse.parse(
      (
        await g.call('POST', '/v1/windows/launch', {
          argv: ['/bin/sleep', '30'],
          wait_for_window_ms: 300,
        })
      ).json,
    );
    expect(res.window_wait).toBe('timed_out');
    process.kill(-res.pid, 'SIGKILL');
  });

  it('closing an unknown window is 404 window_not_found', async () => {
    const res = await g.call('POST', '/v1/windows/close', { window_id: 0x7ffffff });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('window_not_found');
  });

  it('reports a process that exits before any window, and a missing program as 404', async () => {
    const exited = await g.call('POST', '/v1/windows/launch', {
      argv: ['/bin/sh', '-c', 'exit 3'],
      wait_for_window_ms: 5_000,
    });
    expect(WindowLaunchResponse.parse(exited.json)).toMatchObject({
      window_wait: 'exited',
      exit_code: 3,
    });
    const missing = await g.call('POST', '/v1/windows/launch', { argv: ['/nonexistent/app'] });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
  });

  it('rejects a malformed request with 400', async () => {
    const res = await g.call('POST', '/v1/windows/launch', { argv: [] });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('validation_failed');
  });
});

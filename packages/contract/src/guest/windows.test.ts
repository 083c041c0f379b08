import { describe, expect, it } from 'vitest';
import { HealthzResponse } from './health.js';
import {
  WindowCloseRequest,
  WindowInfo,
  WindowLaunchRequest,
  WindowLaunchResponse,
} from './windows.js';

const window = {
  window_id: 0x3a00007,
  title: 'Calculator',
  pid: 4242,
  app: 'Gnome-calculator',
  geometry: { x: 0, y: 0, w: 360, h: 540 },
  z_order: 3,
  focused: true,
  minimized: false,
};

describe('windows', () => {
  it('accepts a window whose pid and app are unknown', () => {
    expect(WindowInfo.safeParse(window).success).toBe(true);
    expect(WindowInfo.safeParse({ ...window, pid: null, app: null }).success).toBe(true);
    expect(WindowInfo.safeParse({ ...window, window_id: 0 }).success).toBe(false);
  });

  it('launches with a bounded wait for the window', () => {
    expect(WindowLaunchRequest.parse({ argv: ['galculator'] })).toEqual({
      argv: ['galculator'],
      wait_for_window_ms: 10_000,
    });
    expect(
      WindowLaunchRequest.safeParse({ argv: ['x'], wait_for_window_ms: 600_000 }).success,
    ).toBe(false);
  });

  it('launches a desktop app by its friendly name, a browser with a url', () => {
    expect(WindowLaunchRequest.parse({ app: 'browser', url: 'http://127.0.0.1:8000/' })).toEqual({
      app: 'browser',
      url: 'http://127.0.0.1:8000/',
      wait_for_window_ms: 10_000,
    });
    expect(WindowLaunchRequest.safeParse({ app: 'office.calc' }).success).toBe(true);
    expect(WindowLaunchRequest.safeParse({ app: 'photoshop' }).success).toBe(false);
    expect(WindowLaunchRequest.safeParse({}).success).toBe(false);
    expect(WindowLaunchRequest.safeParse({ app: 'terminal', argv: ['xterm'] }).success).toBe(false);
    expect(WindowLaunchRequest.safeParse({ app: 'terminal', url: 'http://a/' }).success).toBe(
      false,
    );
    expect(
      WindowLaunchRequest.safeParse({ app: 'browser', url: 'javascript:alert(1)' }).success,
    ).toBe(false);
  });

  it('returns the window exactly when one was found', () => {
    const base = { pid: 4242, duration_ms: 800 };
    expect(WindowLaunchResponse.safeParse({ ...base, window_wait: 'found', window }).success).toBe(
      true,
    );
    expect(WindowLaunchResponse.safeParse({ ...base, window_wait: 'found' }).success).toBe(false);
    expect(
      WindowLaunchResponse.safeParse({ ...base, window_wait: 'timed_out', window }).success,
    ).toBe(false);
    expect(
      WindowLaunchResponse.safeParse({ ...base, window_wait: 'exited', exit_code: 1, signal: null })
        .success,
    ).toBe(true);
  });

  it('closes gracefully by default', () => {
    expect(WindowCloseRequest.parse({ window_id: 7 })).toEqual({
      window_id: 7,
      timeout_ms: 5000,
      force: false,
    });
  });
});

describe('HealthzResponse', () => {
  const health = {
    status: 'ok',
    protocol_version: 'v1',
    display: { name: ':1', available: true, width: 1280, height: 800 },
    a11y_bus: { available: true, registry_available: true },
    vnc_port: 5901,
    versions: { driver: '0.1.0', node: 'v20.20.2' },
    uptime_ms: 1000,
  };

  it('reports display, a11y bus, VNC port and versions', () => {
    expect(HealthzResponse.safeParse(health).success).toBe(true);
    expect(
      HealthzResponse.safeParse({ ...health, vnc_port: null, status: 'degraded' }).success,
    ).toBe(true);
    expect(HealthzResponse.safeParse({ ...health, protocol_version: 'v2' }).success).toBe(false);
    expect(
      HealthzResponse.safeParse({ ...health, display: { ...health.display, name: 'localhost:1' } })
        .success,
    ).toBe(false);
  });
});

// Demo: a Debian calculator driven only by element tokens, its answer read back with verify_state.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';

type Row = { element_token: string; role: string; name?: string; value?: string };

describe('demo: galculator computes 6 × 7 through element tokens', () => {
  let h: A11yDesktopHarness;
  let home: string;
  let pid: number | undefined;
  beforeAll(async () => {
    h = await startA11yHarness();
    home = mkdtempSync(join(tmpdir(), 'galculator-home-'));
  });
  afterAll(async () => {
    if (pid) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await h?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('presses 6 × 7 = and reads 42 from a fresh snapshot', async () => {
    const launched = await h.call('/v1/windows/launch', {
      argv: ['galculator'],
      env: { HOME: home },
      wait_for_window_ms: 20_000,
    });
    expect(launched.status).toBe(200);
    pid = launched.json.pid;
    const windowId = launched.json.window.window_id as number;
    // galculator builds its button grid after the window maps; wait until "=" is in the tree.
    const ready = await h.call('/v1/verify_state', {
      window_id: windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'toggle_button', name: '=' }, unique: true },
      ],
      timeout_ms: 10_000,
    });
    expect(ready.json.status).toBe('satisfied');

    const snap = await h.call('/v1/observe', { window_id: windowId, include_screenshot: false });
    expect(snap.status).toBe(200);
    const button = (name: string) => {
      const hits = (snap.json.elements as Row[]).filter(
        (e) => e.role === 'toggle_button' && e.name === name,
      );
      expect(hits, name).toHaveLength(1);
      return hits[0]!.element_token;
    };
    const effects: string[] = [];
    for (const key of ['6', '*', '7', '=']) {
      const res = await h.call('/v1/act/element', {
        window_id: windowId,
        element_token: button(key),
        action: 'click',
      });
      expect(res.status).toBe(200);
      expect(res.json.effect).not.toBe('refused');
      effects.push(res.json.effect);
    }
    const verify = await h.call('/v1/verify_state', {
      window_id: windowId,
      // galculator's display is a text view whose value is the number shown.
      predicates: [
        { kind: 'element_exists', selector: { role: 'text', value: '42' }, unique: true },
      ],
      stable_samples: 2,
      timeout_ms: 5_000,
    });
    if (verify.json.status !== 'satisfied') {
      const dump = await h.call('/v1/observe', {
        window_id: windowId,
        include_screenshot: false,
        roles: ['text', 'label'],
      });
      console.log(effects, JSON.stringify(dump.json.elements));
    }
    expect(verify.json).toMatchObject({ status: 'satisfied' });
    const fresh = await h.call('/v1/observe', {
      window_id: windowId,
      include_screenshot: false,
      query: '42',
    });
    expect(fresh.json.invalidated_snapshot_ids).toEqual([snap.json.snapshot_id]);
    expect((fresh.json.elements as Row[]).some((e) => e.role === 'text' && e.value === '42')).toBe(
      true,
    );
  });
});

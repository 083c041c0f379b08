// A window waited for with verify_state is usually observed next (a pool's priming waits for an
// element, then the agent's first observe comes): verify_state reads the extents that observe
// will ask for in the background, so that observe finds them cached, and they are the same
// rectangles a fresh read gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObserveRequest, VerifyStateRequest } from '@cubicle/contract/guest';
import { A11yDesktop } from '../src/a11y/a11y-desktop.js';
import { observeWindow } from '../src/a11y/observe-window.js';
import { verifyState } from '../src/a11y/verify-state.js';
import { launchGtkApp, startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import type { GtkApp } from './helpers/a11y-desktop.js';

describe('verify_state warms the extents of the next observe', () => {
  let h: A11yDesktopHarness;
  let app: GtkApp;
  let desktop: A11yDesktop;
  beforeAll(async () => {
    h = await startA11yHarness();
    app = await launchGtkApp(h.session, 12, 'Warm Frames');
    desktop = await A11yDesktop.connect({
      display: h.session.display,
      sessionBusAddress: h.session.dbusAddress,
    });
  });
  afterAll(async () => {
    desktop?.close();
    await app?.stop();
    await h?.stop();
  });

  it('caches the showing rows once the wait is answered, equal to a fresh read', async () => {
    const verdict = await verifyState(
      desktop,
      VerifyStateRequest.parse({
        window_id: app.windowId,
        predicates: [{ kind: 'element_exists', selector: { role: 'push_button' }, unique: false }],
        timeout_ms: 20_000,
      }),
    );
    expect(verdict?.status).toBe('satisfied');
    const bound = await desktop.bindWindow(app.windowId, { showingOnly: true });
    if (bound.kind !== 'ok') throw new Error(`window not bound: ${bound.kind}`);
    const { mirror } = bound.binding;
    const buttons = [...mirror.nodes.values()].filter(
      (n) => n.role === 'push_button' && n.states.includes('showing'),
    );
    expect(buttons.length).toBeGreaterThan(0);
    // The reads go out in the background after the answer: wait for them, not for a time.
    const deadline = Date.now() + 30_000;
    while (buttons.some((b) => !mirror.extents.get(b.path)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(buttons.filter((b) => !mirror.extents.get(b.path)).map((b) => b.name)).toEqual([]);

    // What observe reports from the cache is what the app answers now.
    const seen = await observeWindow(
      desktop,
      ObserveRequest.parse({ window_id: app.windowId, include_screenshot: false }),
    );
    const rows = seen?.elements ?? [];
    const pathOf = (token: string) => {
      const found = desktop.snapshots.resolve(token);
      return found.kind === 'ok' ? found.binding.ref.path : null;
    };
    for (const b of buttons) {
      const row = rows.find((r) => pathOf(r.element_token) === b.path);
      expect(row, b.name).toBeDefined();
      const live = await desktop.extentsOf(mirror.appBus, b.path);
      expect(row?.frame, b.name).toEqual(live);
    }
  });
});

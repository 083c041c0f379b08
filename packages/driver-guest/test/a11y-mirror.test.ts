// The live mirror must equal a fresh full read of the tree after many UI changes: same objects,
// same parents and child order, same roles, names, descriptions, states and interfaces.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A11yDesktop } from '../src/a11y/a11y-desktop.js';
import { observeWindow } from '../src/a11y/observe-window.js';
import { type NodeData, readSubtree } from '../src/a11y/read-node.js';
import {
  launchGtkApp,
  startA11yHarness,
  type A11yDesktopHarness,
  type GtkApp,
} from './helpers/a11y-desktop.js';

function comparable(nodes: Iterable<NodeData>, ignoreShowing = false) {
  return Object.fromEntries(
    [...nodes].map((n) => [
      n.path,
      {
        parent: n.parent,
        children: n.children,
        role: n.role,
        name: n.name,
        description: n.description,
        states: [...n.states].filter((st) => !ignoreShowing || st !== 'showing').sort(),
        ifaces: [...n.ifaces].sort(),
      },
    ]),
  );
}

describe('a11y live mirror', () => {
  let h: A11yDesktopHarness;
  let app: GtkApp;
  let desktop: A11yDesktop;
  beforeAll(async () => {
    h = await startA11yHarness();
    app = await launchGtkApp(h.session, 20, 'Mirror App');
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

  const check = async (ignoreShowing = false) => {
    const bound = await desktop.bindWindow(app.windowId);
    if (bound.kind !== 'ok') throw new Error(`window not bound: ${bound.kind}`);
    const { mirror, frame } = bound.binding;
    const mirrored: NodeData[] = [];
    const stack = [frame.path];
    while (stack.length > 0) {
      const n = mirror.nodes.get(stack.pop() as string);
      if (!n) continue;
      mirrored.push(n);
      stack.push(...n.children);
    }
    const fresh = await readSubtree(desktop.bus, mirror.appBus, frame.path);
    const a = comparable(mirrored, ignoreShowing);
    const b = comparable(fresh.values(), ignoreShowing);
    const diffs: string[] = [];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const x = a[k] as Record<string, unknown> | undefined;
      const y = b[k] as Record<string, unknown> | undefined;
      if (!x || !y)
        diffs.push(`${k} ${x ? 'only in mirror' : 'only in fresh'} ${JSON.stringify(x ?? y)}`);
      else
        for (const f of Object.keys(x))
          if (JSON.stringify(x[f]) !== JSON.stringify(y[f]))
            diffs.push(
              `${k} ${String(x.role)} ${String(x.name)} ${f}: ${JSON.stringify(x[f])} vs ${JSON.stringify(y[f])}`,
            );
    }
    expect(diffs).toEqual([]);
    // Frames come from the frame-relative extent cache: each must equal a fresh GetExtents.
    const snap = await observeWindow(desktop, {
      window_id: app.windowId,
      max_elements: 10_000,
      max_depth: 64,
      include_hidden: true,
      include_screenshot: false,
      max_dimension: 1568,
    });
    const tokens = desktop.snapshots.latest(app.windowId)?.rows ?? [];
    const live = await Promise.all(tokens.map((t) => desktop.extentsOf(t.ref.bus, t.ref.path)));
    const frameDiffs = snap!.elements.flatMap((row, i) =>
      JSON.stringify(row.frame ?? null) === JSON.stringify(live[i])
        ? []
        : [
            `${row.role} ${row.name ?? ''}: ${JSON.stringify(row.frame)} vs ${JSON.stringify(live[i])}`,
          ],
    );
    expect(frameDiffs).toEqual([]);
    return mirrored.length;
  };

  it('stays exact through adds, removals, renames, toggles and recreated widgets', async () => {
    const initial = await check();
    expect(initial).toBeGreaterThan(30);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) await app.send(`add-button B${round}-${i}`);
      await app.send(`rename-button B${round}-1 Renamed${round}`);
      await app.send(`remove-button B${round}-2`);
      await app.send(`sensitive B${round}-3 off`);
      for (let i = 0; i < 3; i++) await app.send(`add-item Extra ${round}-${i}`);
      await app.send('remove-item');
      await app.send(`rename-label label ${round} ✓`);
      await app.send('toggle-check');
      await app.send('recreate-twins');
      await app.send(`set-entry text ${round}`);
      // Let layout and the toolkit's idle work run, as a user's next step would.
      await new Promise((r) => setTimeout(r, 150));
      await check();
    }
    // Immediately after changes, before GTK has laid out (and so mapped) the new button: exact
    // except `showing`, which GTK sets silently a frame later; the next read catches up.
    await app.send('add-button Immediate');
    await app.send('remove-button B0-0');
    await app.send('rename-label right away');
    await check(true);
    await new Promise((r) => setTimeout(r, 150));
    const final = await check();
    expect(final).toBeGreaterThan(initial);
  });
});

import type { ActionEvidence, ActionResult } from '@cubicle/contract/guest';
import { type ActionContext, confirmed, refused, unverifiable } from '../actions/action-results.js';
import { IFACE } from './atspi-constants.js';
import type { NodeData } from './read-node.js';
import { call, liveStates, type Target } from './element-target.js';

const SCROLL_ANYWHERE = 6;

/**
 * scrollIntoView asks the toolkit (Component.ScrollTo) and, where it declines — GTK3 does —
 * moves the nearest scroll pane's scroll bars through their Value interface by exactly the
 * distance between the element and the pane's edge: still background delivery, no pointer.
 * The element's `showing` state read back afterwards is the evidence.
 */
export async function scrollIntoView(t: Target, ctx: ActionContext): Promise<ActionResult> {
  const before = t.states.includes('showing');
  let ok: unknown = false;
  try {
    [ok] = await call(t, IFACE.component, 'ScrollTo', 'u', [SCROLL_ANYWHERE]);
  } catch {
    ok = false;
  }
  let moved = ok === true;
  if (!moved) {
    const result = await scrollAncestor(t);
    if (result === 'no_pane') {
      return refused(
        ctx,
        'action_not_supported',
        'The toolkit cannot scroll to this element and no scroll pane contains it.',
        {
          target: 'pixel',
          reason: 'route_unavailable',
        },
      );
    }
    if (result === 'already_visible') {
      return confirmed(
        { ...ctx, delivery: { ...ctx.delivery, requested_count: 1, delivered_count: 0 } },
        [
          {
            kind: 'state_readback',
            element_token: t.token,
            state: 'showing',
            before,
            after: before,
          },
        ],
        'Already inside its scroll pane; nothing delivered.',
      );
    }
    moved = true;
  }
  await new Promise((r) => setTimeout(r, 30)); // GTK applies the adjustment on its next frame
  await t.mirror.fence().catch(() => undefined);
  const after = (await liveStates(t)).includes('showing');
  const ev: ActionEvidence[] = [
    { kind: 'state_readback', element_token: t.token, state: 'showing', before, after },
  ];
  return after
    ? confirmed(ctx, ev, 'The element is showing.')
    : unverifiable(ctx, 'Scrolled; the element does not report showing yet.', { evidence: ev });
}

// GTK3 reports G_MININT extents for rows outside the viewport, so their offset is unknown.
const OFFSCREEN = -(2 ** 31);

async function scrollAncestor(t: Target): Promise<'no_pane' | 'already_visible' | 'scrolled'> {
  const pane = t.mirror.ancestors(t.node.path).find((a) => a.role === 'scroll_pane');
  if (!pane) return 'no_pane';
  const bars = pane.children
    .map((p) => t.mirror.nodes.get(p))
    .filter(
      (n): n is NonNullable<typeof n> =>
        !!n && n.role === 'scroll_bar' && n.ifaces.has(IFACE.value),
    );
  const view = await t.desktop.extentsOf(t.mirror.appBus, pane.path);
  if (!view || bars.length === 0) return 'no_pane';
  let el = await t.desktop.extentsOf(t.mirror.appBus, t.node.path);
  if (!el) return 'no_pane';
  let jumped = false;
  if (el.y === OFFSCREEN || el.x === OFFSCREEN) {
    jumped = true;
    // First jump to the row's estimated place (its index among its siblings along the range),
    // then correct by the measured distance once it has real extents.
    await estimateJump(t, bars, view);
    await new Promise((r) => setTimeout(r, 30));
    el = await t.desktop.extentsOf(t.mirror.appBus, t.node.path);
    if (!el || el.y === OFFSCREEN || el.x === OFFSCREEN) return 'scrolled';
  }
  const dy = delta(el.y, el.h, view.y, view.h);
  const dx = delta(el.x, el.w, view.x, view.w);
  if (dx === 0 && dy === 0) return jumped ? 'scrolled' : 'already_visible';
  for (const bar of bars) {
    const d = bar.states.includes('vertical') ? dy : dx;
    if (d === 0) continue;
    const ref = { bus: t.mirror.appBus, path: bar.path };
    const current = Number(await t.desktop.bus.getProperty(ref, IFACE.value, 'CurrentValue'));
    await t.desktop.bus.setProperty(ref, IFACE.value, 'CurrentValue', 'd', current + d);
  }
  return 'scrolled';
}

async function estimateJump(
  t: Target,
  bars: NodeData[],
  view: { w: number; h: number },
): Promise<void> {
  const parent = t.node.parent ? t.mirror.nodes.get(t.node.parent) : undefined;
  const index = parent?.children.indexOf(t.node.path) ?? -1;
  if (!parent || index < 0) return;
  const fraction = index / Math.max(1, parent.children.length);
  for (const bar of bars) {
    const vertical = bar.states.includes('vertical');
    const ref = { bus: t.mirror.appBus, path: bar.path };
    const max = Number(await t.desktop.bus.getProperty(ref, IFACE.value, 'MaximumValue'));
    const page = vertical ? view.h : view.w;
    const target = Math.max(0, Math.min(max, fraction * (max + page) - page / 2));
    await t.desktop.bus.setProperty(ref, IFACE.value, 'CurrentValue', 'd', target);
  }
}

/** delta is how far content must scroll so [pos, pos+size) lies inside the view (0 if it does). */
function delta(pos: number, size: number, viewPos: number, viewSize: number): number {
  if (pos < viewPos) return pos - viewPos;
  if (pos + size > viewPos + viewSize)
    return Math.min(pos - viewPos, pos + size - (viewPos + viewSize));
  return 0;
}

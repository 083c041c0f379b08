import type { ActionEvidence, ActionResult } from '@cubicle/contract/guest';
import {
  type ActionContext,
  confirmed,
  refused,
  suspectedNoop,
  unverifiable,
} from '../actions/action-results.js';
import { effectWindowMs, readUntil } from './action-latency.js';
import { IFACE } from './atspi-constants.js';
import { call, defaultActionIndex, liveStates, type Target } from './element-target.js';

// State-changing actions (toggle, focus, select): each is proven by reading its state back.

export async function toggle(
  t: Target,
  ctx: ActionContext,
  want: boolean | undefined,
): Promise<ActionResult> {
  const before = t.states.includes('checked');
  if (want !== undefined && want === before) {
    return confirmed(
      { ...ctx, delivery: { ...ctx.delivery, requested_count: 1, delivered_count: 0 } },
      [{ kind: 'state_readback', element_token: t.token, state: 'checked', before, after: before }],
      'Already in the requested state; nothing delivered.',
    );
  }
  const index = await defaultActionIndex(t);
  await call(t, IFACE.action, 'DoAction', 'i', [index]);
  // readUntil fences each read (the fence goes out with it).
  const after = await readUntil(
    t.mirror,
    async () => (await liveStates(t)).includes('checked'),
    (now) => now !== before,
    effectWindowMs(t.mirror, 20),
  );
  const ev: ActionEvidence[] = [
    { kind: 'state_readback', element_token: t.token, state: 'checked', before, after },
  ];
  if (after !== before)
    return confirmed(ctx, ev, `Toggled; now ${after ? 'checked' : 'unchecked'}.`);
  return suspectedNoop(ctx, 'Toggled, but the checked state did not change.', { evidence: ev });
}

export async function focus(t: Target, ctx: ActionContext): Promise<ActionResult> {
  const [ok] = await call(t, IFACE.component, 'GrabFocus');
  if (ok === false) return refused(ctx, 'action_not_supported', 'The element refused focus.');
  await t.mirror.fence().catch(() => undefined);
  let after = (await liveStates(t)).includes('focused');
  if (!after) {
    await new Promise((r) => setTimeout(r, 20));
    after = (await liveStates(t)).includes('focused');
  }
  const ev: ActionEvidence[] = [
    {
      kind: 'state_readback',
      element_token: t.token,
      state: 'focused',
      before: t.states.includes('focused'),
      after,
    },
  ];
  if (after)
    return confirmed(
      { ...ctx, delivery: { ...ctx.delivery, focus_changed: true } },
      ev,
      'Focused.',
    );
  // GTK reports focus only while its window is active; background focus is real but unseen.
  return unverifiable(
    ctx,
    'Focus was requested; the element does not report being focused (its window may be inactive).',
    { evidence: ev },
  );
}

export async function select(t: Target, ctx: ActionContext): Promise<ActionResult> {
  const parent = t.node.parent ? t.mirror.nodes.get(t.node.parent) : undefined;
  if (!parent || !parent.ifaces.has(IFACE.selection))
    return refused(ctx, 'action_not_supported', "The element's parent offers no Selection.");
  const [index] = await call(t, IFACE.accessible, 'GetIndexInParent');
  const [ok] = await t.desktop.bus.call(
    t.mirror.appBus,
    parent.path,
    IFACE.selection,
    'SelectChild',
    'i',
    [Number(index)],
  );
  if (ok === false)
    return refused(ctx, 'action_not_supported', 'The parent refused to select this child.');
  await t.mirror.fence().catch(() => undefined);
  const after = (await liveStates(t)).includes('selected');
  const ev: ActionEvidence[] = [
    {
      kind: 'state_readback',
      element_token: t.token,
      state: 'selected',
      before: t.states.includes('selected'),
      after,
    },
  ];
  return after
    ? confirmed(ctx, ev, 'Selected.')
    : unverifiable(ctx, 'Selection was requested; the element does not report being selected.', {
        evidence: ev,
      });
}

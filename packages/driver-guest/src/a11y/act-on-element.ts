import type { ActionResult, ElementActionRequest } from '@cubicle/contract/guest';
import type { A11yDesktop } from './a11y-desktop.js';
import { type ActionContext, refused } from './action-result-builders.js';
import { actionsFor } from './atspi-constants.js';
import { click, setValue, type Target, typeText } from './element-actions.js';
import { focus, select, toggle } from './state-actions.js';
import { resolveToken } from './resolve-token.js';
import { scrollIntoView } from './scroll-into-view.js';

// Actions an insensitive element would silently ignore; focus and scrolling still make sense.
const NEEDS_SENSITIVE = new Set(['click', 'set_value', 'type_text', 'toggle', 'select']);

/**
 * actOnElement resolves the token, checks the element can take the action, delivers it and
 * reports what can be proven. Returns null when the window is gone (the route answers 404
 * `window_not_found`, nothing delivered). A bus error after delivery began is reported as
 * `unverifiable`, never as a refusal, since the input may have reached the app.
 */
export async function actOnElement(
  desktop: A11yDesktop,
  req: ElementActionRequest,
): Promise<ActionResult | null> {
  const started = performance.now();
  const resolved = await resolveToken(desktop, req.element_token, req.window_id);
  if (resolved.kind === 'window_not_found') return null;
  if (resolved.kind === 'refused') {
    return refused(
      { started, ...(resolved.snapshotId ? { snapshotId: resolved.snapshotId } : {}) },
      resolved.code,
      resolved.hint,
      {
        target: 'observe',
        reason: resolved.code === 'ambiguous_target' ? 'target_ambiguous' : 'target_stale',
      },
    );
  }
  const { snapshot, mirror, node, states } = resolved;
  const base = { started, snapshotId: snapshot.id };
  const supported = actionsFor(node.role, node.ifaces, states);
  if (!supported.includes(req.action)) {
    return refused(
      base,
      'action_not_supported',
      `A ${node.role} supports ${supported.join(', ') || 'no actions'}, not ${req.action}.`,
    );
  }
  if (NEEDS_SENSITIVE.has(req.action) && !states.includes('sensitive')) {
    return refused(
      base,
      'element_disabled',
      'The element is not sensitive; the app would ignore the input.',
    );
  }
  const t: Target = {
    desktop,
    mirror,
    node,
    token: req.element_token,
    states,
    framePath: snapshot.framePath,
    windowId: snapshot.windowId,
  };
  const ctx: ActionContext = {
    ...base,
    route: 'accessibility',
    delivery: { mode: 'background', focus_changed: false, pointer_moved: false },
  };
  try {
    switch (req.action) {
      case 'click':
        return await click(t, ctx, req.delivery_mode);
      case 'set_value':
        return await setValue(t, ctx, req.value);
      case 'type_text':
        return await typeText(t, ctx, req.text, req.delivery_mode);
      case 'focus':
        return await focus(t, ctx);
      case 'toggle':
        return await toggle(t, ctx, req.checked);
      case 'select':
        return await select(t, ctx);
      case 'scroll_into_view':
        return await scrollIntoView(t, ctx);
      default:
        return req satisfies never;
    }
  } catch (err) {
    const isXtest =
      req.delivery_mode === 'foreground' && (req.action === 'click' || req.action === 'type_text');
    return {
      effect: 'unverifiable',
      route: isXtest ? 'xtest' : ctx.route,
      snapshot_id: snapshot.id,
      retry_safe: false,
      delivery: isXtest ? { mode: 'foreground' } : ctx.delivery,
      escalation: {
        target: 'observe',
        reason: 'delivery_failed',
        hint: 'Delivery failed midway; the input may or may not have arrived. Observe first.',
      },
      summary: `Delivery failed: ${(err as Error).message}`.slice(0, 1024),
      duration_ms: performance.now() - started,
    };
  }
}

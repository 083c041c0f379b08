import type { ActionResult, ElementActionRequest } from '@cubicle/contract/guest';
import type { A11yDesktop } from './a11y-desktop.js';
import { type ActionContext, deliveryFailed, refused } from '../actions/action-results.js';
import type { X11Display } from '../windows/x11/x11-display.js';
import { actionsFor } from './atspi-constants.js';
import { autoDelivery, inWebPage, markAutoSelected } from './auto-delivery.js';
import { click, setValue, typeText } from './element-actions.js';
import { readEarly, type Target } from './element-target.js';
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
  x11: X11Display,
  req: ElementActionRequest,
): Promise<ActionResult | null> {
  const started = performance.now();
  const early = readEarly(desktop, req.element_token, req.window_id, req.action);
  const resolved = await resolveToken(desktop, req.element_token, req.window_id);
  if (resolved.kind === 'window_not_found') return null;
  if (resolved.kind === 'refused') {
    return refused(
      {
        route: 'accessibility',
        started,
        ...(resolved.snapshotId ? { snapshotId: resolved.snapshotId } : {}),
      },
      resolved.code,
      resolved.hint,
      {
        target: 'observe',
        reason: resolved.code === 'ambiguous_target' ? 'target_ambiguous' : 'target_stale',
      },
    );
  }
  const { snapshot, mirror, node, states } = resolved;
  const base = { route: 'accessibility' as const, started, snapshotId: snapshot.id };
  const supported = actionsFor(node.role, node.ifaces, states);
  if (!supported.includes(req.action)) {
    return refused(
      base,
      'action_not_supported',
      `A ${node.role} supports ${supported.join(', ') || 'no actions'}, not ${req.action}.`,
    );
  }
  // GTK and Chromium set `sensitive` with `enabled`; LibreOffice sets only `enabled` on cells.
  const isSensitive = states.includes('sensitive') || states.includes('enabled');
  if (NEEDS_SENSITIVE.has(req.action) && !isSensitive) {
    return refused(
      base,
      'element_disabled',
      'The element is not sensitive; the app would ignore the input.',
    );
  }
  const t: Target = {
    desktop,
    x11,
    mirror,
    node,
    token: req.element_token,
    states,
    framePath: snapshot.framePath,
    windowId: snapshot.windowId,
    tokenOf: (path) => snapshot.tokenOf(mirror.appBus, path),
    ...(early?.path === node.path ? { early } : {}),
  };
  const ctx: ActionContext = {
    ...base,
    delivery: { mode: 'background', focus_changed: false, pointer_moved: false },
  };
  const mode =
    req.delivery_mode ?? autoDelivery(req.action, node, inWebPage(mirror.ancestors(node.path)));
  const result = await deliver(t, ctx, req, mode);
  return req.delivery_mode ? result : markAutoSelected(result);
}

async function deliver(
  t: Target,
  ctx: ActionContext,
  req: ElementActionRequest,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  try {
    switch (req.action) {
      case 'click':
        return await click(t, ctx, mode);
      case 'set_value':
        return await setValue(t, ctx, req.value, mode);
      case 'type_text':
        return await typeText(t, ctx, req.text, mode);
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
      mode === 'foreground' &&
      (req.action === 'click' || req.action === 'type_text' || req.action === 'set_value');
    return deliveryFailed(
      isXtest ? { ...ctx, route: 'xtest', delivery: { mode: 'foreground' } } : ctx,
      err as Error,
    );
  }
}

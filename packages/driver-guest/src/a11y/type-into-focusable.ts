import type { ActionResult } from '@cubicle/contract/guest';
import { type ActionContext, judged, refused } from '../actions/action-results.js';
import { typeText as typeKeys } from '../input/type-text.js';
import { awaitEvidence, deliverWatched } from './action-evidence.js';
import { keyGapMs } from './action-latency.js';
import { IFACE } from './atspi-constants.js';
import { call, evidenceScope, type Target } from './element-target.js';
import { raiseForTyping } from './raise-for-typing.js';

/**
 * typeIntoFocusable types into an element that takes keys but exposes no editable text: a
 * spreadsheet cell (Calc edits it in a cell editor that exists only while typing) or a
 * terminal. Keys can only reach it through the focus, so this is foreground input: the window
 * is raised, the element focused, and the text typed with XTest. What the keys do is the app's
 * business (a formula becomes its result, a command its output), so there is no read-back to
 * compare; the effect is `confirmed` only by events from the element itself or elements tied to
 * it, else `unverifiable`.
 */
export async function typeIntoFocusable(
  t: Target,
  ctx: ActionContext,
  text: string,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (mode === 'background')
    return refused(
      ctx,
      'action_not_supported',
      'The element takes keys only through the keyboard focus (no editable text): send the same request with delivery_mode "foreground", or without one.',
      { target: 'foreground', reason: 'route_unavailable' },
    );
  const raised = await raiseForTyping(t, ctx);
  if (!raised.isRaised) return raised.refusal;
  const fg = raised.ctx;
  const scope = await evidenceScope(t);
  await call(t, IFACE.component, 'GrabFocus');
  const { value: typed, window } = await deliverWatched(t.mirror, () =>
    typeKeys(t.x11, text, undefined, keyGapMs(t.mirror)),
  );
  if (typed.delivered === 0 && typed.error)
    return refused(fg, 'unsupported_text', `Nothing was typed: ${typed.error}`);
  const seen = await awaitEvidence(t.mirror, window, scope, 500);
  return judged(
    fg,
    seen,
    seen.evidence.length > 0
      ? 'Typed with XTest into the focused element; it or an element tied to it changed.'
      : 'Typed with XTest into the focused element; nothing tied to it changed (see observations).',
  );
}

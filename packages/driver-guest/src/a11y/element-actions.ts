import type { ActionEvidence, ActionResult } from '@cubicle/contract/guest';
import {
  type ActionContext,
  confirmed,
  judged,
  refused,
  suspectedNoop,
  unverifiable,
} from '../actions/action-results.js';
import { activateWindow } from '../input/activate-window.js';
import { Keymap } from '../input/keymap.js';
import { typeText as typeKeys } from '../input/type-text.js';
import { XTestPointer } from '../input/xtest-input.js';
import { awaitEvidence, deliverWatched } from './action-evidence.js';
import { inWebPage } from './auto-delivery.js';
import { effectWindowMs, keyGapMs } from './action-latency.js';
import { IFACE, isSecure, isTypedField } from './atspi-constants.js';
import { call, defaultActionIndex, evidenceScope, type Target } from './element-target.js';
import { focusForTyping, raiseForTyping } from './raise-for-typing.js';
import { readBack, settleText } from './read-back.js';
import { readLength, readValue } from './read-values.js';
import { replaceByKeys } from './replace-by-keys.js';
import { typeIntoFocusable } from './type-into-focusable.js';

// The actions on a resolved element (element-target.ts) that act-on-element.ts dispatches to:
// click, set a value, type text. Fields that only the keyboard focus reaches have their own
// modules (replace-by-keys.ts, type-into-focusable.ts); what all of them share (element-target,
// raise-for-typing, read-back) sits below them, so the imports run one way.

/**
 * How long a link click waits for its navigation: the new document loads over the network and
 * its title reaches the window after that (120–190 ms on an idle loopback page, measured; far
 * more under load). The wait ends at the first evidence, so it only costs when nothing happens.
 */
const NAVIGATION_MS = 3_000;

export async function click(
  t: Target,
  ctx: ActionContext,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (mode === 'foreground') return foregroundClick(t, ctx);
  const [index, scope] = await Promise.all([defaultActionIndex(t), evidenceScope(t)]);
  const { value, window } = await deliverWatched(
    t.mirror,
    () => call(t, IFACE.action, 'DoAction', 'i', [index]),
    scope.document,
  );
  if (value[0] === false)
    return refused(
      ctx,
      'action_not_supported',
      'The app declined the action (DoAction returned false); nothing happened.',
    );
  const settle = effectWindowMs(t.mirror, t.node.role === 'link' ? NAVIGATION_MS : 150);
  const seen = await awaitEvidence(t.mirror, window, scope, settle);
  return judged(
    ctx,
    seen,
    seen.evidence.length > 0
      ? 'Clicked; the target, an element tied to it or its document changed.'
      : 'Clicked through AT-SPI; nothing tied to the target changed (see observations).',
  );
}

async function foregroundClick(t: Target, ctx: ActionContext): Promise<ActionResult> {
  const [e, scope] = await Promise.all([
    t.desktop.extentsOf(t.mirror.appBus, t.node.path),
    evidenceScope(t),
  ]);
  if (!e || e.w <= 0 || e.h <= 0)
    return refused(ctx, 'element_offscreen', 'The element has no on-screen extent to click.');
  const focus = await activateWindow(t.x11, t.windowId);
  if (!focus.isActive)
    return refused(
      { ...ctx, route: 'xtest' },
      'element_offscreen',
      'The window manager did not bring the window to the front; nothing was clicked.',
      { target: 'human', reason: 'route_unavailable' },
    );
  const fg: ActionContext = {
    ...ctx,
    route: 'xtest',
    delivery: { mode: 'foreground', pointer_moved: true, focus_changed: focus.changed },
  };
  const at = { x: e.x + Math.floor(e.w / 2), y: e.y + Math.floor(e.h / 2) };
  const { window } = await deliverWatched(
    t.mirror,
    () => new XTestPointer(t.x11).click(at, 1, 1),
    scope.document,
  );
  const seen = await awaitEvidence(t.mirror, window, scope, 300);
  return judged(
    fg,
    seen,
    seen.evidence.length > 0
      ? 'Clicked with XTest; the target or an element tied to it changed.'
      : 'Clicked with XTest at the element centre; nothing tied to it changed (see observations).',
  );
}

export async function setValue(
  t: Target,
  ctx: ActionContext,
  value: string,
  mode: 'background' | 'foreground' = 'background',
): Promise<ActionResult> {
  const secure = isSecure(t.node.role);
  // A web page's field asked in the foreground is typed over even where it has EditableText:
  // Firefox accepts SetTextContents there and changes nothing (see inWebPage).
  const byKeys =
    mode === 'foreground' &&
    t.node.ifaces.has(IFACE.text) &&
    t.states.includes('editable') &&
    inWebPage(t.mirror.ancestors(t.node.path));
  if (t.node.ifaces.has(IFACE.editableText) && !byKeys) {
    const before = secure
      ? await readLength(t.desktop.bus, t.mirror.appBus, t.node)
      : await readValue(t.desktop.bus, t.mirror.appBus, t.node);
    const [ok] = await call(t, IFACE.editableText, 'SetTextContents', 's', [value]);
    if (ok === false)
      return refused(ctx, 'action_not_supported', 'The app refused to set the text (read-only?).');
    await t.mirror.fence().catch(() => undefined);
    return readBack(t, ctx, secure, before, value, 'Set the text');
  }
  if (t.node.ifaces.has(IFACE.value)) {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n))
      return refused(ctx, 'invalid_value', 'This element takes a number.');
    const before = await readValue(t.desktop.bus, t.mirror.appBus, t.node);
    await t.desktop.bus.setProperty(
      { bus: t.mirror.appBus, path: t.node.path },
      IFACE.value,
      'CurrentValue',
      'd',
      n,
    );
    const after = await readValue(t.desktop.bus, t.mirror.appBus, t.node);
    const ev: ActionEvidence[] = [
      { kind: 'value_readback', element_token: t.token, before, after },
    ];
    if (Number(after) === n) return confirmed(ctx, ev, 'Set the value; read back equal.');
    if (after === before)
      return suspectedNoop(ctx, 'The value did not change (out of range?).', { evidence: ev });
    return unverifiable(
      ctx,
      'The value changed, but not to what was asked (clamped or stepped?).',
      { evidence: ev },
    );
  }
  if (byKeys || isTypedField(t.node.role, t.node.ifaces, t.states))
    return replaceByKeys(t, ctx, value, mode);
  return refused(ctx, 'action_not_supported', 'The element has neither editable text nor a value.');
}

/**
 * earlyText is the target's text read with its token (readEarly), when that read is the one
 * readValue would make (an element with Text) and it succeeded; else undefined.
 */
function earlyText(t: Target): Promise<string> | undefined {
  const early = t.early?.text;
  if (!early || !t.node.ifaces.has(IFACE.text)) return undefined;
  return early.then((body) =>
    body ? String(body[0]) : readValue(t.desktop.bus, t.mirror.appBus, t.node),
  );
}

export async function typeText(
  t: Target,
  ctx: ActionContext,
  text: string,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const editable = t.node.ifaces.has(IFACE.editableText);
  // A web field (Text without EditableText) is typed through the focus, then read back below.
  if (!editable && !isTypedField(t.node.role, t.node.ifaces, t.states))
    return typeIntoFocusable(t, ctx, text, mode);
  if (!editable && mode === 'background')
    return refused(
      ctx,
      'action_not_supported',
      'This field exposes no editable text, so it can only be typed into through the keyboard focus: send the same request with delivery_mode "foreground", or without one.',
      { target: 'foreground', reason: 'route_unavailable' },
    );
  const secure = isSecure(t.node.role);
  const [beforeText, caretOffset] = await Promise.all([
    earlyText(t) ?? readValue(t.desktop.bus, t.mirror.appBus, t.node),
    (t.early?.caret ?? Promise.resolve(null)).then(
      (caret) =>
        caret ??
        t.desktop.bus.getProperty(
          { bus: t.mirror.appBus, path: t.node.path },
          IFACE.text,
          'CaretOffset',
        ),
    ),
  ]);
  const caret = Number(caretOffset);
  const chars = [...beforeText];
  const at = caret >= 0 && caret <= chars.length ? caret : chars.length;
  const expected = chars.slice(0, at).join('') + text + chars.slice(at).join('');
  const before = secure ? chars.length : beforeText;
  if (mode === 'foreground') {
    // The keymap is read alongside the raise: two requests on one X connection, one wait.
    const keymap = Keymap.open(t.x11);
    keymap.catch(() => undefined);
    const raised = await raiseForTyping(t, ctx);
    if (!raised.isRaised) return raised.refusal;
    const fg = raised.ctx;
    await focusForTyping(t, raised);
    let settled: string | number | undefined;
    const typed = await typeKeys(
      t.x11,
      text,
      async () => {
        settled = await settleText(t, secure ? [...expected].length : expected);
      },
      keyGapMs(t.mirror),
      keymap,
    );
    if (typed.delivered === 0 && typed.error)
      return refused(fg, 'unsupported_text', `Nothing was typed: ${typed.error}`);
    return readBack(t, fg, secure, before, expected, 'Typed with XTest', settled);
  }
  // ATK takes the length in bytes of UTF-8, not characters.
  const [ok] = await call(t, IFACE.editableText, 'InsertText', 'isi', [
    at,
    text,
    Buffer.byteLength(text, 'utf8'),
  ]);
  if (ok === false)
    return refused(ctx, 'action_not_supported', 'The app refused the insertion (read-only?).');
  await t.mirror.fence().catch(() => undefined);
  return readBack(t, ctx, secure, before, expected, 'Inserted the text at the caret');
}

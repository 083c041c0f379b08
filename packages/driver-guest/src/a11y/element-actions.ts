import type { ActionEvidence, ActionResult, ElementState } from '@cubicle/contract/guest';
import {
  type ActionContext,
  confirmed,
  judged,
  refused,
  suspectedNoop,
  unverifiable,
} from '../actions/action-results.js';
import { activateWindow } from '../input/activate-window.js';
import { typeText as typeKeys } from '../input/type-text.js';
import { XTestPointer } from '../input/xtest-input.js';
import type { X11Display } from '../windows/x11/x11-display.js';
import type { A11yDesktop } from './a11y-desktop.js';
import {
  awaitEvidence,
  deliverWatched,
  documentOf,
  type EvidenceScope,
  relatedPaths,
} from './action-evidence.js';
import type { AppMirror } from './app-mirror.js';
import { effectWindowMs, readUntil } from './action-latency.js';
import { IFACE, isSecure, isTypedField, statesFromBits } from './atspi-constants.js';
import type { NodeData } from './read-node.js';
import { readLength, readValue } from './read-values.js';
import { replaceByKeys } from './replace-by-keys.js';
import { typeIntoFocusable } from './type-into-focusable.js';

/** Target is a resolved element: everything an action implementation needs. */
export interface Target {
  /** Path of the window's frame accessible: events elsewhere are not evidence. */
  framePath: string;
  /** X11 window of the snapshot: foreground input activates it first so XTest lands there. */
  windowId: number;
  desktop: A11yDesktop;
  /** The desktop's X connection: the one input path for foreground (XTest) delivery. */
  x11: X11Display;
  mirror: AppMirror;
  node: NodeData;
  token: string;
  states: ElementState[];
  /** Token of another element of the same snapshot, to name it in evidence. */
  tokenOf(path: string): string | undefined;
}

/**
 * How long a link click waits for its navigation: the new document loads over the network and
 * its title reaches the window after that (120–190 ms on an idle loopback page, measured; far
 * more under load). The wait ends at the first evidence, so it only costs when nothing happens.
 */
const NAVIGATION_MS = 3_000;

const DEFAULT_ACTION_NAMES = ['click', 'press', 'activate', 'toggle', 'jump', 'open'];

export async function call(
  t: Target,
  iface: string,
  member: string,
  signature?: string,
  body?: unknown[],
): Promise<unknown[]> {
  return t.desktop.bus.call(t.mirror.appBus, t.node.path, iface, member, signature, body);
}

export async function liveStates(t: Target): Promise<ElementState[]> {
  const [bits] = await call(t, IFACE.accessible, 'GetState');
  return statesFromBits(bits as number[]);
}

/** defaultActionIndex picks the toolkit's press/click action; GTK names it "click". */
export async function defaultActionIndex(t: Target): Promise<number> {
  const [actions] = await call(t, IFACE.action, 'GetActions');
  const names = (actions as [string, string, string][]).map(([n]) => n.toLowerCase());
  const i = names.findIndex((n) => DEFAULT_ACTION_NAMES.includes(n));
  return i >= 0 ? i : 0;
}

/** evidenceScope is what the target's effect may show up on: itself, its relations, its document. */
export async function evidenceScope(t: Target): Promise<EvidenceScope> {
  return {
    framePath: t.framePath,
    target: t.node.path,
    related: await relatedPaths(t.desktop.bus, t.mirror, t.node.path),
    document: documentOf(t.mirror, t.node.path),
    tokenOf: (p) => (p === t.node.path ? t.token : t.tokenOf(p)),
  };
}

export async function click(
  t: Target,
  ctx: ActionContext,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (mode === 'foreground') return foregroundClick(t, ctx);
  const [index, scope] = await Promise.all([defaultActionIndex(t), evidenceScope(t)]);
  const { value, window } = await deliverWatched(t.mirror, () =>
    call(t, IFACE.action, 'DoAction', 'i', [index]),
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
  const { window } = await deliverWatched(t.mirror, () => new XTestPointer(t.x11).click(at, 1, 1));
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
  if (t.node.ifaces.has(IFACE.editableText)) {
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
  if (isTypedField(t.node.role, t.node.ifaces, t.states)) return replaceByKeys(t, ctx, value, mode);
  return refused(ctx, 'action_not_supported', 'The element has neither editable text nor a value.');
}

/** readBack compares the field's text (or a secure field's length) with what was asked. */
export async function readBack(
  t: Target,
  ctx: ActionContext,
  secure: boolean,
  before: string | number,
  expected: string,
  what: string,
): Promise<ActionResult> {
  if (secure) {
    const after = await readLength(t.desktop.bus, t.mirror.appBus, t.node);
    const ev: ActionEvidence[] = [
      { kind: 'length_readback', element_token: t.token, before: before as number, after },
    ];
    if (after === [...expected].length)
      return confirmed(ctx, ev, `${what}; secure field, its length read back.`);
    return unverifiable(ctx, `${what}; the secure field's length differs from what was sent.`, {
      evidence: ev,
    });
  }
  const after = await readUntil(
    t.mirror,
    () => readValue(t.desktop.bus, t.mirror.appBus, t.node),
    (now) => now === expected,
    effectWindowMs(t.mirror, 0),
  );
  const ev: ActionEvidence[] = [
    {
      kind: 'value_readback',
      element_token: t.token,
      before: String(before).slice(0, 65_536),
      after: after.slice(0, 65_536),
    },
  ];
  if (after === expected) return confirmed(ctx, ev, `${what}; read back equal.`);
  if (after === before)
    return suspectedNoop(ctx, `${what}: the text did not change.`, { evidence: ev });
  return unverifiable(
    ctx,
    `${what}; the text changed but differs from what was asked (the app may filter input).`,
    { evidence: ev },
  );
}

export async function typeText(
  t: Target,
  ctx: ActionContext,
  text: string,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (!t.node.ifaces.has(IFACE.editableText)) return typeIntoFocusable(t, ctx, text, mode);
  const secure = isSecure(t.node.role);
  const beforeText = await readValue(t.desktop.bus, t.mirror.appBus, t.node);
  const caret = Number(
    await t.desktop.bus.getProperty(
      { bus: t.mirror.appBus, path: t.node.path },
      IFACE.text,
      'CaretOffset',
    ),
  );
  const chars = [...beforeText];
  const at = caret >= 0 && caret <= chars.length ? caret : chars.length;
  const expected = chars.slice(0, at).join('') + text + chars.slice(at).join('');
  const before = secure ? chars.length : beforeText;
  if (mode === 'foreground') {
    const fg: ActionContext = {
      ...ctx,
      route: 'xtest',
      delivery: { mode: 'foreground', focus_changed: true },
    };
    const focus = await activateWindow(t.x11, t.windowId);
    if (!focus.isActive)
      return refused(
        fg,
        'element_offscreen',
        'The window manager did not bring the window to the front; nothing was typed.',
        { target: 'human', reason: 'route_unavailable' },
      );
    await call(t, IFACE.component, 'GrabFocus');
    const typed = await typeKeys(t.x11, text, () =>
      settleText(t, secure ? [...expected].length : expected),
    );
    if (typed.delivered === 0 && typed.error)
      return refused(fg, 'unsupported_text', `Nothing was typed: ${typed.error}`);
    return readBack(t, fg, secure, before, expected, 'Typed with XTest');
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

/**
 * settleText waits (up to 3 s) until key events typed through XTest have reached the text: the
 * toolkit handles them from its event queue after XTest returned, late on a busy machine.
 * It returns as soon as the text matches, so the bound only costs when typing went wrong.
 */
async function settleText(t: Target, expected: string | number): Promise<void> {
  const deadline = performance.now() + 3_000;
  while (performance.now() < deadline) {
    await t.mirror.fence().catch(() => undefined);
    const now =
      typeof expected === 'number'
        ? await readLength(t.desktop.bus, t.mirror.appBus, t.node)
        : await readValue(t.desktop.bus, t.mirror.appBus, t.node);
    if (now === expected) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

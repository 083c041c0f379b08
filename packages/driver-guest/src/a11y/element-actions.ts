import type { ActionEvidence, ActionResult, ElementState } from '@cubicle/contract/guest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { A11yDesktop } from './a11y-desktop.js';
import {
  type ActionContext,
  awaitEvents,
  confirmed,
  refused,
  suspectedNoop,
  unverifiable,
} from './action-result-builders.js';
import type { AppMirror } from './app-mirror.js';
import { IFACE, isSecure, statesFromBits } from './atspi-constants.js';
import type { NodeData } from './read-node.js';
import { readLength, readValue } from './read-values.js';

const run = promisify(execFile);

/** Target is a resolved element: everything an action implementation needs. */
// xdotool needs a UTF-8 locale to type anything beyond ASCII.
const xEnv = (t: Target) => ({
  DISPLAY: t.desktop.display,
  PATH: '/usr/bin:/bin',
  LC_ALL: 'C.UTF-8',
});

const scopeOf = (t: Target) => ({ framePath: t.framePath, path: t.node.path, token: t.token });

export interface Target {
  /** Path of the window's frame accessible: events elsewhere are not evidence. */
  framePath: string;
  /** X11 window of the snapshot: foreground input activates it first so XTest lands there. */
  windowId: number;
  desktop: A11yDesktop;
  mirror: AppMirror;
  node: NodeData;
  token: string;
  states: ElementState[];
}

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

export async function click(
  t: Target,
  ctx: ActionContext,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (mode === 'foreground') return foregroundClick(t, ctx);
  const index = await defaultActionIndex(t);
  const since = performance.now();
  const [ok] = await call(t, IFACE.action, 'DoAction', 'i', [index]);
  if (ok === false)
    return refused(
      ctx,
      'action_not_supported',
      'The app declined the action (DoAction returned false); nothing happened.',
    );
  const events = await awaitEvents(t.mirror, since, scopeOf(t));
  if (events.length > 0) return confirmed(ctx, events, 'Clicked; the app reported changes.');
  return unverifiable(ctx, 'Clicked through AT-SPI; the app reported no accessible change.');
}

async function foregroundClick(t: Target, ctx: ActionContext): Promise<ActionResult> {
  const e = await t.desktop.extentsOf(t.mirror.appBus, t.node.path);
  if (!e || e.w <= 0 || e.h <= 0)
    return refused(ctx, 'element_offscreen', 'The element has no on-screen extent to click.');
  const fg: ActionContext = {
    ...ctx,
    route: 'xtest',
    delivery: { mode: 'foreground', pointer_moved: true },
  };
  const since = performance.now();
  await run(
    'xdotool',
    [
      'windowactivate',
      '--sync',
      String(t.windowId),
      'mousemove',
      '--sync',
      String(e.x + Math.floor(e.w / 2)),
      String(e.y + Math.floor(e.h / 2)),
      'click',
      '1',
    ],
    { env: xEnv(t) },
  );
  const events = await awaitEvents(t.mirror, since, scopeOf(t), 30);
  if (events.length > 0)
    return confirmed(fg, events, 'Clicked with XTest; the app reported changes.');
  return unverifiable(
    fg,
    'Clicked with XTest at the element centre; the app reported no accessible change.',
  );
}

export async function setValue(
  t: Target,
  ctx: ActionContext,
  value: string,
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
      return suspectedNoop(ctx, 'The value did not change (out of range?).', ev);
    return unverifiable(
      ctx,
      'The value changed, but not to what was asked (clamped or stepped?).',
      ev,
    );
  }
  return refused(ctx, 'action_not_supported', 'The element has neither editable text nor a value.');
}

async function readBack(
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
    return unverifiable(ctx, `${what}; the secure field's length differs from what was sent.`, ev);
  }
  const after = await readValue(t.desktop.bus, t.mirror.appBus, t.node);
  const ev: ActionEvidence[] = [
    {
      kind: 'value_readback',
      element_token: t.token,
      before: String(before).slice(0, 65_536),
      after: after.slice(0, 65_536),
    },
  ];
  if (after === expected) return confirmed(ctx, ev, `${what}; read back equal.`);
  if (after === before) return suspectedNoop(ctx, `${what}: the text did not change.`, ev);
  return unverifiable(
    ctx,
    `${what}; the text changed but differs from what was asked (the app may filter input).`,
    ev,
  );
}

export async function typeText(
  t: Target,
  ctx: ActionContext,
  text: string,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (!t.node.ifaces.has(IFACE.editableText))
    return refused(
      ctx,
      'action_not_supported',
      'The element has no editable text; use pixel typing on the latest screenshot instead.',
      { target: 'pixel', reason: 'route_unavailable' },
    );
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
    const env = xEnv(t);
    await run('xdotool', ['windowactivate', '--sync', String(t.windowId)], { env });
    await call(t, IFACE.component, 'GrabFocus');
    // Characters missing from the keymap are typed by remapping a spare keycode; with no delay
    // between keys the app reads the keymap after it changed back (measured: "Grüße" → "Gre"),
    // and a busy machine needs more than 12 ms (dropped characters seen under load).
    await run('xdotool', ['type', '--delay', '30', '--', text], { env });
    await settleText(t, secure ? [...expected].length : expected);
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
 * toolkit handles them from its event queue after xdotool has returned, late on a busy machine.
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

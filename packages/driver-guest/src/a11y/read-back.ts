import type { ActionEvidence, ActionResult } from '@cubicle/contract/guest';
import {
  type ActionContext,
  confirmed,
  suspectedNoop,
  unverifiable,
} from '../actions/action-results.js';
import { effectWindowMs, readUntil } from './action-latency.js';
import type { Target } from './element-target.js';
import { readLength, readValue } from './read-values.js';

/** How long typed keys may take to reach the field: the toolkit drains its queue after XTest. */
const SETTLE_MS = 3_000;

/** readBack compares the field's text (or a secure field's length) with what was asked. */
export async function readBack(
  t: Target,
  ctx: ActionContext,
  secure: boolean,
  before: string | number,
  expected: string,
  what: string,
  settled?: string | number,
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
  // settleText's last read, when it already matched, is the read-back: no second round trip.
  const after =
    settled === expected
      ? expected
      : await readUntil(
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

/**
 * settleText waits (up to 3 s) until key events typed through XTest have reached the text (a
 * secure field: its length): the toolkit handles them from its event queue after XTest
 * returned, late on a busy machine. Between reads it waits for the field's next event (its
 * text-changed), at most 25 ms: a fixed 25 ms poll made most typing cost a whole period, since
 * the first read (right after the keys) is nearly always early. It returns as soon as the text
 * matches, so the bound only costs when typing went wrong. Returns the last value read.
 * Each read goes out with a fence (readFenced), and an event that arrived while it was out
 * sends the next read at once (see readUntil).
 */
export async function settleText(
  t: Target,
  expected: string | number,
): Promise<string | number | undefined> {
  const read = (): Promise<string | number> =>
    typeof expected === 'number'
      ? readLength(t.desktop.bus, t.mirror.appBus, t.node)
      : readValue(t.desktop.bus, t.mirror.appBus, t.node);
  return readUntil<string | number>(t.mirror, read, (now) => now === expected, SETTLE_MS);
}

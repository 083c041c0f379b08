import type {
  ActionDelivery,
  ActionEscalation,
  ActionEvidence,
  ActionResult,
  RefusalCode,
} from '@cubicle/contract/guest';
import type { AppMirror } from './app-mirror.js';

/** ActionContext carries what every result repeats: route, snapshot and the start time. */
export interface ActionContext {
  started: number;
  snapshotId?: string;
  route: 'accessibility' | 'xtest';
  delivery: ActionDelivery;
}

const elapsed = (ctx: { started: number }) => performance.now() - ctx.started;
const snap = (ctx: { snapshotId?: string }) =>
  ctx.snapshotId ? { snapshot_id: ctx.snapshotId } : {};

export function refused(
  ctx: { started: number; snapshotId?: string },
  code: RefusalCode,
  hint: string,
  escalation?: ActionEscalation,
): ActionResult {
  return {
    effect: 'refused',
    route: 'accessibility',
    ...snap(ctx),
    retry_safe: true,
    error: { code, hint: hint.slice(0, 1024) },
    ...(escalation ? { escalation } : {}),
    duration_ms: elapsed(ctx),
  };
}

export function confirmed(
  ctx: ActionContext,
  evidence: ActionEvidence[],
  summary: string,
): ActionResult {
  return {
    effect: 'confirmed',
    route: ctx.route,
    ...snap(ctx),
    retry_safe: false,
    delivery: ctx.delivery,
    evidence: evidence.slice(0, 32),
    summary,
    duration_ms: elapsed(ctx),
  };
}

export function unverifiable(
  ctx: ActionContext,
  summary: string,
  evidence: ActionEvidence[] = [],
): ActionResult {
  return {
    effect: 'unverifiable',
    route: ctx.route,
    ...snap(ctx),
    retry_safe: false,
    delivery: ctx.delivery,
    ...(evidence.length > 0 ? { evidence: evidence.slice(0, 32) } : {}),
    escalation: {
      target: 'observe',
      reason: 'effect_unconfirmed',
      hint: 'Observe or verify_state before repeating: the input was delivered.',
    },
    summary,
    duration_ms: elapsed(ctx),
  };
}

export function suspectedNoop(
  ctx: ActionContext,
  summary: string,
  evidence: ActionEvidence[] = [],
): ActionResult {
  return {
    effect: 'suspected_noop',
    route: ctx.route,
    ...snap(ctx),
    retry_safe: false,
    delivery: ctx.delivery,
    ...(evidence.length > 0 ? { evidence: evidence.slice(0, 32) } : {}),
    escalation:
      ctx.delivery.mode === 'background'
        ? {
            target: 'foreground',
            reason: 'suspected_noop',
            hint: 'The app did not change; a foreground retry (delivery_mode "foreground") may reach it.',
          }
        : { target: 'human', reason: 'suspected_noop' },
    summary,
    duration_ms: elapsed(ctx),
  };
}

/** EventScope: only events of the target's window count, and the target's own name its token. */
export interface EventScope {
  framePath: string;
  path: string;
  token: string;
}

// Layout and redraw notifications follow any input and say nothing about its effect.
const NOISE =
  /^object:(bounds-changed|visible-data-changed)|^object:state-changed:(armed|pressed|focused|active)/;

/**
 * eventsSince collects AT-SPI change events received after `since` as evidence. Only events of
 * the target's window count (another window's clock ticking proves nothing), and layout/redraw
 * noise is ignored.
 */
export function eventsSince(mirror: AppMirror, since: number, scope: EventScope): ActionEvidence[] {
  const out: ActionEvidence[] = [];
  for (const e of mirror.recentEvents) {
    if (e.at < since || NOISE.test(e.event) || e.frame !== scope.framePath) continue;
    out.push({
      kind: 'a11y_event',
      event: e.event.slice(0, 128),
      ...(e.path === scope.path ? { element_token: scope.token } : {}),
      after_ms: Math.max(0, e.at - since),
    });
    if (out.length >= 8) break;
  }
  return out;
}

/**
 * awaitEvents waits for change events after a delivery: one fence (events emitted while the app
 * handled the call are then in), then, only if there are none yet, one short settle for work the
 * toolkit defers to its idle loop.
 */
export async function awaitEvents(
  mirror: AppMirror,
  since: number,
  scope: EventScope,
  settleMs = 5,
): Promise<ActionEvidence[]> {
  await mirror.fence().catch(() => undefined);
  let events = eventsSince(mirror, since, scope);
  if (events.length === 0 && settleMs > 0) {
    await new Promise((r) => setTimeout(r, settleMs));
    await mirror.fence().catch(() => undefined);
    events = eventsSince(mirror, since, scope);
  }
  return events;
}

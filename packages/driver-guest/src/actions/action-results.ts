import type {
  ActionDelivery,
  ActionEscalation,
  ActionEvidence,
  ActionResult,
  ActionRoute,
  PartialDelivery,
  RefusalCode,
  ScreenshotId,
} from '@cubicle/contract/guest';

/**
 * The one set of ActionResult builders: element actions (a11y/), pixel input (input/) and window
 * closing (windows/) all answer through these, so a refusal, a confirmation or an unverifiable
 * result has the same shape whichever route delivered it. The schema enforces the invariants
 * (evidence on confirmed, error only on refused); these keep the fields consistent.
 */

/** ResultContext is what every result repeats: the route taken, what it was aimed at, when it began. */
export interface ResultContext {
  route: ActionRoute;
  started: number;
  /** Snapshot an element token was resolved against. */
  snapshotId?: string;
  /** Screenshot pixel coordinates were measured in. */
  screenshotId?: ScreenshotId;
}

/** ActionContext is a ResultContext once input is being delivered: how it is delivered. */
export interface ActionContext extends ResultContext {
  delivery: ActionDelivery;
}

/** Observed is what an action produced: proof tied to it, and changes seen that were not. */
export interface Observed {
  evidence?: ActionEvidence[];
  observations?: ActionEvidence[];
}

const MAX_ITEMS = 32;
const MAX_TEXT = 1024;

function base(c: ResultContext, summary?: string) {
  return {
    route: c.route,
    ...(c.snapshotId ? { snapshot_id: c.snapshotId } : {}),
    ...(c.screenshotId ? { screenshot_id: c.screenshotId } : {}),
    ...(summary ? { summary: summary.slice(0, MAX_TEXT) } : {}),
    duration_ms: Math.max(0, performance.now() - c.started),
  };
}

function lists(o: Observed) {
  return {
    ...(o.evidence?.length ? { evidence: o.evidence.slice(0, MAX_ITEMS) } : {}),
    ...(o.observations?.length ? { observations: o.observations.slice(0, MAX_ITEMS) } : {}),
  };
}

/** refused is the result when nothing was delivered: the only one that is safe to retry. */
export function refused(
  c: ResultContext,
  code: RefusalCode,
  hint: string,
  escalation?: ActionEscalation,
): ActionResult {
  return {
    effect: 'refused',
    ...base(c),
    retry_safe: true,
    error: { code, hint: hint.slice(0, MAX_TEXT) },
    ...(escalation ? { escalation } : {}),
  };
}

/** confirmed needs at least one evidence item tied to the action (the schema rejects none). */
export function confirmed(
  c: ActionContext,
  evidence: ActionEvidence[],
  summary?: string,
  observations: ActionEvidence[] = [],
): ActionResult {
  return {
    effect: 'confirmed',
    ...base(c, summary),
    retry_safe: false,
    delivery: c.delivery,
    evidence: evidence.slice(0, MAX_ITEMS),
    ...lists({ observations }),
  };
}

/** unverifiable: delivered, but nothing tied to the action proved or disproved its effect. */
export function unverifiable(
  c: ActionContext,
  summary: string,
  observed: Observed = {},
  hint = 'Observe or verify_state before repeating: the input was delivered.',
): ActionResult {
  return {
    effect: 'unverifiable',
    ...base(c, summary),
    retry_safe: false,
    delivery: c.delivery,
    ...lists(observed),
    escalation: { target: 'observe', reason: 'effect_unconfirmed', hint },
  };
}

/** suspectedNoop: delivered, and what could be read back says nothing changed. */
export function suspectedNoop(
  c: ActionContext,
  summary: string,
  observed: Observed = {},
  escalation?: ActionEscalation,
): ActionResult {
  return {
    effect: 'suspected_noop',
    ...base(c, summary),
    retry_safe: false,
    delivery: c.delivery,
    ...lists(observed),
    escalation:
      escalation ??
      (c.delivery.mode === 'background'
        ? {
            target: 'foreground',
            reason: 'suspected_noop',
            hint: 'The app did not change; a foreground retry (delivery_mode "foreground") may reach it.',
          }
        : { target: 'human', reason: 'suspected_noop' }),
  };
}

/** partial: only some units (characters, presses) went through; the caller completes the rest. */
export function partial(c: ResultContext, delivery: PartialDelivery, hint: string): ActionResult {
  return {
    effect: 'partial',
    ...base(c),
    retry_safe: false,
    delivery,
    escalation: { target: 'observe', reason: 'delivery_failed', hint: hint.slice(0, MAX_TEXT) },
  };
}

/**
 * judged turns a delivery and the evidence gathered into the honest effect: `confirmed` only with
 * evidence tied to the action, else `unverifiable` with whatever else was seen as observations.
 */
export function judged(
  c: ActionContext,
  observed: Observed,
  summary?: string,
  hint = 'Nothing tied to the action changed; take a screenshot or observe before retrying.',
): ActionResult {
  if (observed.evidence && observed.evidence.length > 0)
    return confirmed(c, observed.evidence, summary, observed.observations);
  return unverifiable(
    c,
    summary ?? 'Delivered; no change tied to the action was seen.',
    observed,
    hint,
  );
}

/** deliveryFailed: a route broke midway; the input may or may not have arrived. */
export function deliveryFailed(c: ActionContext, err: Error): ActionResult {
  return {
    effect: 'unverifiable',
    ...base(c, `Delivery failed: ${err.message}`),
    retry_safe: false,
    delivery: c.delivery,
    escalation: {
      target: 'observe',
      reason: 'delivery_failed',
      hint: 'Delivery failed midway; the input may or may not have arrived. Observe first.',
    },
  };
}

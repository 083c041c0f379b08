import type {
  ActionDelivery,
  ActionEscalation,
  ActionEvidence,
  ActionResult,
  ActionRoute,
  RefusalCode,
  ScreenshotId,
} from '@cubicle/contract/guest';

interface Common {
  route: ActionRoute;
  started: number;
  screenshot_id?: ScreenshotId;
  summary?: string;
}

const elapsed = (started: number) => Math.max(0, performance.now() - started);

/** refused is the result when nothing was delivered: the only one that is safe to retry. */
export function refused(
  c: Common,
  code: RefusalCode,
  hint: string,
  escalation?: ActionEscalation,
): ActionResult {
  return {
    effect: 'refused',
    route: c.route,
    ...(c.screenshot_id ? { screenshot_id: c.screenshot_id } : {}),
    duration_ms: elapsed(c.started),
    retry_safe: true,
    error: { code, hint },
    ...(escalation ? { escalation } : {}),
  };
}

/**
 * judged turns a delivery and whatever evidence was gathered into the honest effect:
 * `confirmed` only with evidence, else `unverifiable` with a suggestion to look again.
 */
export function judged(
  c: Common,
  delivery: ActionDelivery,
  evidence: ActionEvidence[],
): ActionResult {
  const base = {
    route: c.route,
    ...(c.screenshot_id ? { screenshot_id: c.screenshot_id } : {}),
    ...(c.summary ? { summary: c.summary } : {}),
    duration_ms: elapsed(c.started),
    retry_safe: false as const,
    delivery,
  };
  if (evidence.length > 0) return { effect: 'confirmed', ...base, evidence };
  return {
    effect: 'unverifiable',
    ...base,
    escalation: {
      target: 'observe',
      reason: 'effect_unconfirmed',
      hint: 'Nothing visible changed in the window; take a screenshot or observe before retrying.',
    },
  };
}

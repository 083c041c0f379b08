import type {
  ElementSelector,
  PredicateResult,
  UnknownReason,
  VerifyStateRequest,
  VerifyStateResponse,
} from '@cubicle/contract/guest';
import type { A11yDesktop, WindowBinding } from './a11y-desktop.js';
import { IFACE, isSecure } from './atspi-constants.js';
import type { NodeData } from './read-node.js';
import { readValue } from './read-values.js';
import { warmFrames } from './observe-window.js';

type Verdict =
  | { status: 'satisfied' }
  | { status: 'unsatisfied' }
  | { status: 'unknown'; reason: UnknownReason };
type Sample = { overall: Verdict; predicates: PredicateResult[] };

/**
 * verifyState samples the live window (its mirror, synced before every sample) until every
 * predicate has held on `stable_samples` consecutive samples or `timeout_ms` passes. It never
 * takes a snapshot, so the caller's tokens stay valid. Null when the window does not exist.
 */
export async function verifyState(
  desktop: A11yDesktop,
  req: VerifyStateRequest,
): Promise<VerifyStateResponse | null> {
  const started = performance.now();
  const deadline = started + req.timeout_ms;
  let streak = 0;
  let samples = 0;
  let last: Sample | null = null;
  let seen: WindowBinding | null = null;
  for (;;) {
    const bound = await desktop.bindWindow(req.window_id);
    seen = bound.kind === 'ok' ? bound.binding : null;
    if (bound.kind === 'window_not_found') {
      if (samples === 0) return null;
      last = uniform(req, { status: 'unknown', reason: 'window_gone' });
    } else if (bound.kind === 'not_accessible') {
      last = uniform(req, { status: 'unknown', reason: 'unobservable' });
    } else {
      last = await sample(desktop, bound.binding, req);
    }
    samples++;
    streak = last.overall.status === 'satisfied' ? streak + 1 : 0;
    if (streak >= req.stable_samples) break;
    const outOfTime =
      req.timeout_ms === 0
        ? samples >= req.stable_samples
        : performance.now() + req.sample_interval_ms > deadline;
    const o = last.overall;
    if (outOfTime || (o.status === 'unknown' && o.reason === 'window_gone')) break;
    await new Promise((r) => setTimeout(r, req.sample_interval_ms));
  }
  // What is waited for is usually observed next (a pool's priming waits for a page's link):
  // its rows' extents are read now, in the background, instead of in that observe.
  if (seen) void warmFrames(desktop, seen.mirror, seen.frame.path).catch(() => undefined);
  const base = { predicates: last.predicates, samples, duration_ms: performance.now() - started };
  if (last.overall.status === 'satisfied') {
    return streak >= req.stable_samples
      ? { ...base, status: 'satisfied' }
      : { ...base, status: 'unknown', unknown_reason: 'insufficient_stable_samples' };
  }
  if (last.overall.status === 'unsatisfied') return { ...base, status: 'unsatisfied' };
  return { ...base, status: 'unknown', unknown_reason: last.overall.reason };
}

function uniform(req: VerifyStateRequest, v: Verdict): Sample {
  return { overall: v, predicates: req.predicates.map((_, index) => toResult(index, v)) };
}

function toResult(
  index: number,
  v: Verdict,
  extra: Partial<PredicateResult> = {},
): PredicateResult {
  return v.status === 'unknown'
    ? { index, ...extra, status: 'unknown', unknown_reason: v.reason }
    : { index, ...extra, status: v.status };
}

async function sample(
  desktop: A11yDesktop,
  b: WindowBinding,
  req: VerifyStateRequest,
): Promise<Sample> {
  const nodes: NodeData[] = [];
  const stack = [b.frame.path];
  while (stack.length > 0) {
    const n = b.mirror.nodes.get(stack.pop() as string);
    if (!n) continue;
    nodes.push(n);
    stack.push(...n.children);
  }
  const predicates: PredicateResult[] = [];
  const verdicts: Verdict[] = [];
  for (const [index, p] of req.predicates.entries()) {
    let v: Verdict;
    let extra: Partial<PredicateResult> = {};
    if (p.kind === 'window_title') {
      const title = b.props.title;
      const ok =
        p.match.mode === 'equals' ? title === p.match.title : title.includes(p.match.title);
      v = ok ? { status: 'satisfied' } : { status: 'unsatisfied' };
      extra = { observed_title: title.slice(0, 4096) };
    } else {
      const { count, secureHit, unreadable } = await matchCount(desktop, b, nodes, p.selector);
      extra = { match_count: count };
      if (p.kind === 'element_exists') {
        if (count > 1 && p.unique) v = { status: 'unknown', reason: 'ambiguous_match' };
        else if (count > 0) v = { status: 'satisfied' };
        else if (secureHit) v = { status: 'unknown', reason: 'secure_field' };
        else if (unreadable) v = { status: 'unknown', reason: 'unobservable' };
        else v = { status: 'unsatisfied' };
      } else if (count > 0) v = { status: 'unsatisfied' };
      else if (secureHit) v = { status: 'unknown', reason: 'secure_field' };
      else if (unreadable) v = { status: 'unknown', reason: 'tree_incomplete' };
      else v = { status: 'satisfied' };
    }
    verdicts.push(v);
    predicates.push(toResult(index, v, extra));
  }
  const unknown = verdicts.find((v) => v.status === 'unknown');
  const overall: Verdict =
    unknown ??
    (verdicts.some((v) => v.status === 'unsatisfied')
      ? { status: 'unsatisfied' }
      : { status: 'satisfied' });
  return { overall, predicates };
}

async function matchCount(
  desktop: A11yDesktop,
  b: WindowBinding,
  nodes: NodeData[],
  s: ElementSelector,
) {
  const name = s.name_contains?.toLowerCase();
  const candidates = nodes.filter(
    (n) =>
      (s.role === undefined || n.role === s.role) &&
      (s.name === undefined || n.name === s.name) &&
      (name === undefined || n.name.toLowerCase().includes(name)) &&
      (s.states === undefined || s.states.every((st) => n.states.includes(st))) &&
      (s.states_clear === undefined || s.states_clear.every((st) => !n.states.includes(st))),
  );
  const needsValue = s.value !== undefined || s.value_contains !== undefined;
  if (!needsValue) return { count: candidates.length, secureHit: false, unreadable: false };
  let secureHit = false;
  let unreadable = false;
  const want = s.value_contains?.toLowerCase();
  const hits = await Promise.all(
    // Elements without text or a value have none: absent, not unknown.
    candidates
      .filter((n) => n.ifaces.has(IFACE.text) || n.ifaces.has(IFACE.value))
      .map(async (n) => {
        // A secure field is never compared: verify_state must not become a password oracle.
        if (isSecure(n.role)) {
          secureHit = true;
          return false;
        }
        try {
          const v = await readValue(desktop.bus, b.mirror.appBus, n);
          return (
            (s.value === undefined || v === s.value) &&
            (want === undefined || v.toLowerCase().includes(want))
          );
        } catch {
          unreadable = true;
          return false;
        }
      }),
  );
  return { count: hits.filter(Boolean).length, secureHit, unreadable };
}

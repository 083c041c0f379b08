import { describe, expect, it } from 'vitest';
import { ActionEvidence, ActionResult, PartialDelivery } from './action-result.js';

const background = { mode: 'background' } as const;
const valueReadback = { kind: 'value_readback', before: '', after: 'hello' } as const;

const confirmed = {
  effect: 'confirmed',
  route: 'accessibility',
  delivery: background,
  evidence: [valueReadback],
  retry_safe: false,
  duration_ms: 12.5,
};

const refused = {
  effect: 'refused',
  route: 'accessibility',
  error: { code: 'stale_element_token', hint: 'Observe the window again and use a fresh token.' },
  retry_safe: true,
  duration_ms: 1,
};

describe('ActionResult', () => {
  it('accepts one well-formed result of each effect', () => {
    const results = [
      confirmed,
      {
        effect: 'partial',
        route: 'xtest',
        delivery: {
          mode: 'foreground',
          requested_count: 10,
          delivered_count: 4,
          pointer_moved: true,
        },
        escalation: { target: 'observe', reason: 'delivery_failed' },
        retry_safe: false,
        duration_ms: 80,
      },
      {
        effect: 'unverifiable',
        route: 'accessibility',
        delivery: background,
        escalation: { target: 'observe', reason: 'effect_unconfirmed' },
        retry_safe: false,
        duration_ms: 9,
      },
      {
        effect: 'suspected_noop',
        route: 'synthetic_events',
        delivery: background,
        evidence: [{ kind: 'screenshot_diff', changed_ratio: 0 }],
        escalation: { target: 'foreground', reason: 'suspected_noop' },
        retry_safe: false,
        duration_ms: 40,
      },
      refused,
    ];
    for (const result of results) expect(ActionResult.safeParse(result).error).toBeUndefined();
  });

  it('rejects confirmed without evidence, whether missing or empty', () => {
    const { evidence: _evidence, ...bare } = confirmed;
    expect(ActionResult.safeParse(bare).success).toBe(false);
    expect(ActionResult.safeParse({ ...bare, evidence: [] }).success).toBe(false);
  });

  it('accepts confirmed with a single value_readback item', () => {
    const parsed = ActionResult.parse({
      ...confirmed,
      evidence: [{ kind: 'value_readback', after: '42' }],
    });
    expect(parsed.effect).toBe('confirmed');
  });

  it('rejects partial without delivered and requested counts', () => {
    const partial = { effect: 'partial', route: 'xtest', retry_safe: false, duration_ms: 5 };
    expect(ActionResult.safeParse({ ...partial, delivery: background }).success).toBe(false);
    expect(
      ActionResult.safeParse({ ...partial, delivery: { ...background, delivered_count: 3 } })
        .success,
    ).toBe(false);
    expect(
      ActionResult.safeParse({
        ...partial,
        delivery: { ...background, delivered_count: 3, requested_count: 5 },
      }).success,
    ).toBe(true);
  });

  it('rejects a partial delivery that delivered nothing or everything', () => {
    expect(
      PartialDelivery.safeParse({ ...background, requested_count: 5, delivered_count: 0 }).success,
    ).toBe(false);
    expect(
      PartialDelivery.safeParse({ ...background, requested_count: 5, delivered_count: 5 }).success,
    ).toBe(false);
  });

  it('rejects refused with a delivery or evidence', () => {
    expect(ActionResult.safeParse({ ...refused, delivery: background }).success).toBe(false);
    expect(ActionResult.safeParse({ ...refused, evidence: [valueReadback] }).success).toBe(false);
  });

  it('requires error on refused and forbids it elsewhere', () => {
    const { error: _error, ...noError } = refused;
    expect(ActionResult.safeParse(noError).success).toBe(false);
    expect(ActionResult.safeParse({ ...confirmed, error: refused.error }).success).toBe(false);
    expect(
      ActionResult.safeParse({ ...refused, error: { code: 'not_a_code', hint: 'x' } }).success,
    ).toBe(false);
  });

  it('ties retry_safe to whether anything was delivered', () => {
    expect(ActionResult.safeParse({ ...refused, retry_safe: false }).success).toBe(false);
    expect(ActionResult.safeParse({ ...confirmed, retry_safe: true }).success).toBe(false);
    const { retry_safe: _retry, ...noRetry } = confirmed;
    expect(ActionResult.safeParse(noRetry).success).toBe(false);
  });

  it('requires delivery on every delivered effect', () => {
    for (const effect of ['confirmed', 'unverifiable', 'suspected_noop']) {
      const { delivery: _delivery, ...rest } = { ...confirmed, effect };
      expect(ActionResult.safeParse(rest).success).toBe(false);
    }
  });

  it('requires a route from the closed list', () => {
    const { route: _route, ...noRoute } = confirmed;
    expect(ActionResult.safeParse(noRoute).success).toBe(false);
    expect(ActionResult.safeParse({ ...confirmed, route: 'dom' }).success).toBe(false);
  });

  it('rejects unknown fields at every level', () => {
    expect(ActionResult.safeParse({ ...confirmed, verified: true }).success).toBe(false);
    expect(
      ActionResult.safeParse({ ...confirmed, delivery: { ...background, extra: 1 } }).success,
    ).toBe(false);
    expect(
      ActionResult.safeParse({ ...confirmed, evidence: [{ ...valueReadback, extra: 1 }] }).success,
    ).toBe(false);
    expect(
      ActionResult.safeParse({ ...refused, error: { ...refused.error, extra: 1 } }).success,
    ).toBe(false);
    expect(
      ActionResult.safeParse({
        ...refused,
        escalation: { target: 'observe', reason: 'target_stale', extra: 1 },
      }).success,
    ).toBe(false);
  });

  it('has no escalation on confirmed: there is nothing to escalate', () => {
    expect(
      ActionResult.safeParse({
        ...confirmed,
        escalation: { target: 'pixel', reason: 'route_unavailable' },
      }).success,
    ).toBe(false);
  });
});

describe('ActionEvidence', () => {
  it('types every kind and rejects an unknown one', () => {
    const items = [
      valueReadback,
      { kind: 'length_readback', before: 0, after: 7 },
      {
        kind: 'state_readback',
        element_token: 's1f:3',
        state: 'checked',
        before: false,
        after: true,
      },
      { kind: 'name_readback', before: 'Rename me', after: 'Renamed' },
      { kind: 'a11y_event', event: 'object:state-changed:checked', after_ms: 3 },
      { kind: 'window_change', change: 'closed', window_id: 0x3a00007 },
      { kind: 'screenshot_diff', changed_ratio: 0.02, region: { x: 10, y: 10, w: 40, h: 20 } },
      { kind: 'process_exit', pid: 4242, exit_code: 0, signal: null },
    ];
    for (const item of items) expect(ActionEvidence.safeParse(item).error).toBeUndefined();
    expect(ActionEvidence.safeParse({ kind: 'trust_me' }).success).toBe(false);
    expect(
      ActionEvidence.safeParse({ kind: 'state_readback', state: 'checkd', after: true }).success,
    ).toBe(false);
  });
});

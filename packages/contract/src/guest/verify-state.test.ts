import { describe, expect, it } from 'vitest';
import { VerifyStateRequest, VerifyStateResponse } from './verify-state.js';

const exists = { kind: 'element_exists', selector: { role: 'label', name_contains: '42' } };

describe('VerifyStateRequest', () => {
  it('accepts 1–8 predicates of every kind and fills defaults', () => {
    const parsed = VerifyStateRequest.parse({
      window_id: 7,
      predicates: [
        exists,
        { kind: 'element_absent', selector: { name: 'Saving…' } },
        {
          kind: 'element_exists',
          selector: { role: 'check_box', states: ['checked'] },
          unique: true,
        },
        { kind: 'element_exists', selector: { role: 'push_button', states_clear: ['sensitive'] } },
        { kind: 'element_exists', selector: { value: '' } },
        { kind: 'window_title', match: { mode: 'equals', title: 'Calculator' } },
        { kind: 'window_title', match: { mode: 'contains', title: 'Calc' } },
        { kind: 'element_exists', selector: { value_contains: 'hello' } },
      ],
    });
    expect(parsed).toMatchObject({ stable_samples: 1, sample_interval_ms: 100, timeout_ms: 2000 });
    expect(parsed.predicates[0]).toEqual({ ...exists, unique: false });
  });

  it('rejects zero or more than 8 predicates', () => {
    expect(VerifyStateRequest.safeParse({ window_id: 7, predicates: [] }).success).toBe(false);
    expect(
      VerifyStateRequest.safeParse({ window_id: 7, predicates: Array(9).fill(exists) }).success,
    ).toBe(false);
  });

  it('rejects empty selectors, misspelt states and unknown fields', () => {
    const one = (predicate: unknown) =>
      VerifyStateRequest.safeParse({ window_id: 7, predicates: [predicate] }).success;
    expect(one({ kind: 'element_exists', selector: {} })).toBe(false);
    expect(one({ kind: 'element_exists', selector: { states: ['chekced'] } })).toBe(false);
    expect(one({ kind: 'element_exists', selector: { label: 'OK' } })).toBe(false);
    expect(one({ kind: 'element_absent', selector: { name: 'OK' }, unique: true })).toBe(false);
    expect(one({ kind: 'window_title', match: { mode: 'regex', title: '.*' } })).toBe(false);
  });
});

describe('VerifyStateResponse', () => {
  const base = { samples: 3, duration_ms: 210 };

  it('accepts satisfied and unsatisfied without a reason', () => {
    expect(
      VerifyStateResponse.safeParse({
        ...base,
        status: 'satisfied',
        predicates: [{ index: 0, status: 'satisfied', match_count: 1 }],
      }).success,
    ).toBe(true);
    expect(
      VerifyStateResponse.safeParse({
        ...base,
        status: 'unsatisfied',
        predicates: [{ index: 0, status: 'unsatisfied', match_count: 0 }],
      }).success,
    ).toBe(true);
  });

  it('requires unknown_reason exactly when unknown, at both levels', () => {
    const predicate = {
      index: 0,
      status: 'unknown',
      unknown_reason: 'ambiguous_match',
      match_count: 2,
    };
    expect(
      VerifyStateResponse.safeParse({
        ...base,
        status: 'unknown',
        unknown_reason: 'ambiguous_match',
        predicates: [predicate],
      }).success,
    ).toBe(true);
    expect(
      VerifyStateResponse.safeParse({ ...base, status: 'unknown', predicates: [predicate] })
        .success,
    ).toBe(false);
    expect(
      VerifyStateResponse.safeParse({
        ...base,
        status: 'satisfied',
        unknown_reason: 'unobservable',
        predicates: [{ index: 0, status: 'satisfied' }],
      }).success,
    ).toBe(false);
    const { unknown_reason: _reason, ...bare } = predicate;
    expect(
      VerifyStateResponse.safeParse({
        ...base,
        status: 'unknown',
        unknown_reason: 'unobservable',
        predicates: [bare],
      }).success,
    ).toBe(false);
  });
});

import { EgressPolicy, type EgressPolicyInput } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { describe, expect, it } from 'vitest';
import { decideConnection } from './decide.js';
import { effectivePolicy } from './effective-policy.js';

const OPERATOR = { allow: ['10.20.0.0/16'], hostAddresses: ['198.51.100.254'] };
const pool = (p: EgressPolicyInput) => EgressPolicy.parse(p);

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected egress_widens_pool');
}

describe('effectivePolicy', () => {
  it('uses the installation default with no rules when the pool has no policy', () => {
    expect(effectivePolicy('none', OPERATOR, null, null)).toEqual({
      mode: 'none',
      mode_source: 'installation',
      allow: [],
      deny: [],
      operator_allow: ['10.20.0.0/16'],
      host_addresses: ['198.51.100.254'],
    });
  });

  it('labels pool and claim rules by source and index', () => {
    const policy = effectivePolicy(
      'none',
      OPERATOR,
      pool({ mode: 'allowlist', allow: ['*.example.test'], deny: ['ads.example.test'] }),
      { allow: ['api.example.test:443'], deny: ['203.0.113.0/24'] },
    );
    expect(policy.mode).toBe('allowlist');
    expect(policy.allow).toEqual([{ rule: 'api.example.test:443', source: 'claim', index: 0 }]);
    expect(policy.deny).toEqual([
      { rule: 'ads.example.test', source: 'pool', index: 0 },
      { rule: '203.0.113.0/24', source: 'claim', index: 0 },
    ]);
    expect(
      decideConnection(policy, {
        ip: '203.0.113.5',
        port: 443,
        protocol: 'tcp',
        name: 'api.example.test',
      }).rule,
    ).toBe('claim.deny[0]: 203.0.113.0/24');
  });

  it('lets a claim go more restrictive in mode', () => {
    const open = pool({ mode: 'open' });
    expect(effectivePolicy('none', OPERATOR, open, { mode: 'none' })).toMatchObject({
      mode: 'none',
      mode_source: 'claim',
    });
    expect(
      effectivePolicy('none', OPERATOR, open, { mode: 'allowlist', allow: ['x.test'] }).mode,
    ).toBe('allowlist');
    // An allow list under an open pool narrows it to that list.
    expect(effectivePolicy('none', OPERATOR, open, { allow: ['x.test'] }).mode).toBe('allowlist');
    // Omitted fields inherit the pool's.
    expect(
      effectivePolicy('none', OPERATOR, pool({ mode: 'allowlist', allow: ['a.test'] }), {}).allow,
    ).toEqual([{ rule: 'a.test', source: 'pool', index: 0 }]);
  });

  it('refuses a wider mode', () => {
    const err = refusal(() =>
      effectivePolicy('none', OPERATOR, pool({ mode: 'allowlist' }), { mode: 'open' }),
    );
    expect(err.code).toBe('egress_widens_pool');
    expect(err.status).toBe(422);
    expect(err.details).toMatchObject({
      field: 'egress.mode',
      pool_mode: 'allowlist',
      claim_mode: 'open',
    });
    // The installation default counts as the pool's policy.
    expect(refusal(() => effectivePolicy('none', OPERATOR, null, { mode: 'allowlist' })).code).toBe(
      'egress_widens_pool',
    );
  });

  it('refuses allow rules outside the pool allow list', () => {
    const allowlist = pool({ mode: 'allowlist', allow: ['*.example.test:443', '203.0.113.0/24'] });
    const cases: [string, string][] = [
      ['example.test', 'the wildcard does not cover its own name'],
      ['api.example.test', 'every port is wider than :443'],
      ['api.example.test:80', 'another port'],
      ['203.0.0.0/16', 'a wider block'],
      ['198.51.100.1', 'another block'],
      ['*.test:443', 'a higher wildcard'],
    ];
    for (const [rule, why] of cases) {
      const err = refusal(() =>
        effectivePolicy('none', OPERATOR, allowlist, { allow: ['api.example.test:443', rule] }),
      );
      expect(err.details, why).toEqual({ field: 'egress.allow[1]', rule, pool_mode: 'allowlist' });
    }
    expect(
      effectivePolicy('none', OPERATOR, allowlist, {
        allow: ['api.example.test:443', '*.eu.example.test:443', '203.0.113.128/25'],
      }).allow.length,
    ).toBe(3);
  });

  it('refuses any allow rule under a none pool but accepts an empty list and denies', () => {
    const none = pool({ mode: 'none' });
    expect(
      refusal(() => effectivePolicy('open', OPERATOR, none, { allow: ['x.test'] })).details,
    ).toMatchObject({
      field: 'egress.allow[0]',
    });
    expect(effectivePolicy('open', OPERATOR, none, { allow: [], deny: ['x.test'] }).mode).toBe(
      'none',
    );
  });

  it('never lets a claim touch the operator ranges', () => {
    const policy = effectivePolicy('open', OPERATOR, null, { deny: ['x.test'] });
    expect(policy.operator_allow).toEqual(OPERATOR.allow);
    expect(policy.host_addresses).toEqual(OPERATOR.hostAddresses);
  });
});

describe('effectivePolicy after the pool changed', () => {
  it("drops what a narrowing accepted earlier would now widen, with widening: 'drop'", () => {
    const claim = { mode: 'allowlist' as const, allow: ['api.example.test', 'b.other.test'] };
    const now = pool({ mode: 'allowlist', allow: ['*.other.test'] });
    expect(refusal(() => effectivePolicy('none', OPERATOR, now, claim)).code).toBe(
      'egress_widens_pool',
    );
    const kept = effectivePolicy('none', OPERATOR, now, claim, { widening: 'drop' });
    expect(kept.allow).toEqual([{ rule: 'b.other.test', source: 'claim', index: 1 }]);
    const closed = effectivePolicy('none', OPERATOR, pool({ mode: 'none' }), claim, {
      widening: 'drop',
    });
    expect(closed).toMatchObject({ mode: 'none', mode_source: 'pool', allow: [] });
  });
});

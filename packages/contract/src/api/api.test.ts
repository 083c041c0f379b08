import { describe, expect, it } from 'vitest';
import {
  ClaimId,
  CreateClaimRequest,
  IdPrefixes,
  PoolSpec,
  ResourceName,
  Routes,
  SandboxTransitions,
  isSandboxTransitionAllowed,
  toFastifyPath,
} from './index.js';

describe('ids', () => {
  it('accept only their own prefix and a 26-char ULID body', () => {
    expect(ClaimId.safeParse('clm_01hzy3m9v0k6r7x8q2w4e5t6y7').success).toBe(true);
    expect(ClaimId.safeParse('pool_01hzy3m9v0k6r7x8q2w4e5t6y7').success).toBe(false);
    expect(ClaimId.safeParse('clm_01HZY3M9V0K6R7X8Q2W4E5T6Y7').success).toBe(false);
    expect(ClaimId.safeParse("clm_'; drop table claims; --").success).toBe(false);
    expect(new Set(Object.values(IdPrefixes)).size).toBe(Object.keys(IdPrefixes).length);
  });
});

describe('PoolSpec', () => {
  it('fills documented defaults', () => {
    const spec = PoolSpec.parse({ image: 'cubicle/desktop:1' });
    expect(spec).toMatchObject({
      backend: 'local',
      claim_ttl_seconds: 900,
      autoscaling: { min: 0, initial: 1, max: 5 },
      idle_timeout_seconds: null,
      env: {},
    });
  });

  it('rejects min > initial, ttl above max lifetime, unknown fields and bad env names', () => {
    expect(
      PoolSpec.safeParse({ image: 'x', autoscaling: { min: 3, initial: 1, max: 5 } }).success,
    ).toBe(false);
    expect(
      PoolSpec.safeParse({ image: 'x', claim_ttl_seconds: 100, max_claim_lifetime_seconds: 50 })
        .success,
    ).toBe(false);
    expect(PoolSpec.safeParse({ image: 'x', replicas: 3 }).success).toBe(false);
    expect(PoolSpec.safeParse({ image: 'x', env: { '1BAD': 'v' } }).success).toBe(false);
    expect(PoolSpec.safeParse({ image: 'x', backend: 'docker' }).success).toBe(false);
  });
});

describe('claims and names', () => {
  it('names are DNS-label-like', () => {
    expect(ResourceName.safeParse('job-42').success).toBe(true);
    expect(ResourceName.safeParse('Job_42').success).toBe(false);
    expect(ResourceName.safeParse('-x').success).toBe(false);
    expect(ResourceName.safeParse('a'.repeat(64)).success).toBe(false);
  });

  it('CreateClaimRequest defaults and bounds', () => {
    expect(CreateClaimRequest.parse({})).toEqual({ metadata: {}, wait_seconds: 20 });
    expect(CreateClaimRequest.safeParse({ ttl_seconds: 0 }).success).toBe(false);
    expect(CreateClaimRequest.safeParse({ ttl_seconds: '60' }).success).toBe(false);
  });
});

describe('sandbox state machine', () => {
  it('never goes back to warm after a claim and ends in deleted', () => {
    expect(isSandboxTransitionAllowed('warm', 'claimed')).toBe(true);
    expect(isSandboxTransitionAllowed('claimed', 'warm')).toBe(false);
    expect(isSandboxTransitionAllowed('releasing', 'warm')).toBe(false);
    expect(SandboxTransitions.deleted).toEqual([]);
  });
});

describe('route table', () => {
  it('has unique operation ids and method+path pairs', () => {
    const routes = Object.values(Routes);
    expect(new Set(routes.map((r) => r.operationId)).size).toBe(routes.length);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBe(routes.length);
    expect(toFastifyPath('/v1/claims/{id}/secrets/{secret_id}')).toBe(
      '/v1/claims/:id/secrets/:secret_id',
    );
  });
});

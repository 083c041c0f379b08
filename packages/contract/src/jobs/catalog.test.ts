import { describe, expect, it } from 'vitest';
import { Jobs, JobNames, parseJobPayload, queueFor } from './catalog.js';

const sandbox = 'sbx_01h00000000000000000000000';
const tenant = 'ten_01h00000000000000000000000';

describe('job catalog', () => {
  it('names are namespaced and every spec is bounded', () => {
    for (const name of JobNames) {
      expect(name).toMatch(/^[a-z]+\.[a-z_]+$/);
      const spec = Jobs[name];
      expect(spec.attempts).toBeGreaterThanOrEqual(1);
      expect(spec.timeout_ms).toBeGreaterThan(0);
    }
  });

  it('never retries guest calls automatically (a delivered action must not be replayed)', () => {
    expect(Jobs['guest.call'].attempts).toBe(1);
  });

  it('routes guest calls to a per-sandbox queue', () => {
    const payload = {
      tenant_id: tenant,
      claim_id: 'clm_01h00000000000000000000000',
      sandbox_id: sandbox,
      operation: 'observe' as const,
      request: {},
    };
    expect(queueFor('guest.call', payload)).toBe(`guest-${sandbox}`);
    expect(queueFor('sandbox.provision', { tenant_id: tenant, sandbox_id: sandbox })).toBe(
      'sandboxes',
    );
  });

  it('rejects bad payloads: unknown fields, wrong ids', () => {
    expect(() =>
      parseJobPayload('sandbox.destroy', { tenant_id: tenant, sandbox_id: sandbox, extra: 1 }),
    ).toThrow();
    expect(() =>
      parseJobPayload('sandbox.destroy', {
        tenant_id: tenant,
        sandbox_id: 'pool_01h00000000000000000000000',
      }),
    ).toThrow();
    expect(parseJobPayload('sandbox.destroy', { tenant_id: tenant, sandbox_id: sandbox })).toEqual({
      tenant_id: tenant,
      sandbox_id: sandbox,
    });
  });
});

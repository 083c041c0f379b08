import { Routes } from '@cubicle/contract/api';
import { AuditEvent } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { auditActionFor, isMutating, pathTarget } from './audit-action.js';

describe('auditActionFor', () => {
  it('derives resource.verb from operation ids', () => {
    expect(auditActionFor(Routes.applyPool)).toEqual({ action: 'pool.apply', targetType: 'pool' });
    expect(auditActionFor(Routes.createViewerTicket)).toEqual({
      action: 'viewer_ticket.create',
      targetType: 'viewer_ticket',
    });
    expect(auditActionFor(Routes.revokeApiKey).action).toBe('api_key.revoke');
    expect(auditActionFor(Routes.heartbeatClaim).action).toBe('claim.heartbeat');
  });

  it('names every mutating contract route with an action the AuditEvent schema accepts', () => {
    const mutating = Object.values(Routes).filter((r) => isMutating(r.method));
    expect(mutating.length).toBeGreaterThan(5);
    const action = AuditEvent.shape.action;
    for (const r of mutating)
      expect(action.safeParse(auditActionFor(r).action).success, r.operationId).toBe(true);
  });

  it('refuses operation ids it cannot read', () => {
    expect(() => auditActionFor({ operationId: 'Pool' })).toThrow(/operationId/);
    expect(isMutating('GET')).toBe(false);
    expect(isMutating('DELETE')).toBe(true);
  });
});

describe('pathTarget', () => {
  const claim = 'clm_01jd8x3m4k6z9q2w5e7r1t3y5v';
  it('names the resource a path acts on, also when the path goes on past its id', () => {
    // runClaimShell's action reads `claim_shell.run`: its target is the claim, not the type name.
    expect(pathTarget(Routes.runClaimShell, { id: claim })).toBe(claim);
    expect(pathTarget(Routes.rotateWebhookSecret, { id: 'wh_x' })).toBe('wh_x');
    expect(pathTarget(Routes.deleteSecret, { id: claim, secret_id: 'sec_y' })).toBe('sec_y');
    expect(pathTarget(Routes.createApiKey, {})).toBeNull();
  });

  it('gives every mutating route with a path parameter an id target', () => {
    for (const r of Object.values(Routes).filter((d) => isMutating(d.method))) {
      const names = [...r.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
      if (names.length === 0) continue;
      const params = Object.fromEntries(names.map((n) => [n, `${n}-value`]));
      expect(pathTarget(r, params), r.operationId).toBe(`${names.at(-1)}-value`);
    }
  });
});

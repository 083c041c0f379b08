import { Routes } from '@cubicle/contract/api';
import { AuditEvent } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { auditActionFor, isMutating } from './audit-action.js';

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

import type { ViewerCloseReason } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { LiveStreams, type LiveStream } from './live-streams.js';

function stream(ticketId: string, claimId = 'c1', tenantId = 't1') {
  const closed: ViewerCloseReason[] = [];
  const s: LiveStream & { closed: ViewerCloseReason[] } = {
    ticketId,
    claimId,
    tenantId,
    closed,
    close: (reason) => closed.push(reason),
  };
  return s;
}

describe('LiveStreams', () => {
  it('admits up to the per-ticket and per-tenant limits and frees slots on release', () => {
    const streams = new LiveStreams({ perTicket: 2, perTenant: 3 });
    const [a1, a2, a3] = [stream('a'), stream('a'), stream('a')];
    expect(streams.admit(a1)).toBe('ok');
    expect(streams.admit(a2)).toBe('ok');
    expect(streams.admit(a3)).toBe('ticket_limit');
    expect(streams.admit(stream('b'))).toBe('ok');
    expect(streams.admit(stream('c'))).toBe('tenant_limit');
    expect(streams.admit(stream('c', 'c9', 't2'))).toBe('ok');
    expect(streams.size).toBe(4);
    streams.release(a1);
    streams.release(a1); // idempotent
    expect(streams.admit(a3)).toBe('ok');
  });

  it('closes by ticket, by claim and all, with the reason', () => {
    const streams = new LiveStreams({ perTicket: 5, perTenant: 10 });
    const x = stream('x', 'c1');
    const y = stream('y', 'c1');
    const z = stream('z', 'c2');
    for (const s of [x, y, z]) streams.admit(s);
    streams.closeTicket('x', 'revoked');
    expect([x.closed, y.closed, z.closed]).toEqual([['revoked'], [], []]);
    streams.closeClaim('c1', 'ended');
    expect([x.closed, y.closed, z.closed]).toEqual([['revoked', 'ended'], ['ended'], []]);
    streams.closeAll('shutting_down');
    expect(z.closed).toEqual(['shutting_down']);
    expect(streams.openTicketIds().sort()).toEqual(['x', 'y', 'z']);
  });
});

import type { ViewerCloseReason } from '@cubicle/contract/api';

/** LiveStream is one open viewer connection, as the registry needs to see it. */
export interface LiveStream {
  ticketId: string;
  claimId: string;
  tenantId: string;
  close(reason: ViewerCloseReason): void;
}

export interface StreamLimits {
  /** Concurrent streams of one ticket (a leaked ticket cannot feed a crowd). */
  perTicket: number;
  /** Concurrent streams of one tenant (across replicas with stream-leases.ts, else per process). */
  perTenant: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perTicket: 5, perTenant: 100 };

type Index = Map<string, Set<LiveStream>>;

function add(index: Index, key: string, stream: LiveStream) {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(stream);
}

function remove(index: Index, key: string, stream: LiveStream) {
  const set = index.get(key);
  if (!set) return;
  set.delete(stream);
  if (set.size === 0) index.delete(key);
}

/**
 * LiveStreams tracks this process's open streams by ticket, claim and tenant, enforces the
 * concurrency limits, and closes streams when a ticket is revoked or a claim ends. Its limits
 * are per process; the API adds cluster-wide ones through Redis leases (stream-leases.ts), which
 * lapse on their own so a crashed replica strands no count, and this per-process check is what
 * remains while Redis is unreachable.
 */
export class LiveStreams {
  private readonly byTicket: Index = new Map();
  private readonly byClaim: Index = new Map();
  private readonly byTenant: Index = new Map();

  constructor(readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS) {}

  /** admit registers a stream, or names the limit it would break (and registers nothing). */
  admit(stream: LiveStream): 'ok' | 'ticket_limit' | 'tenant_limit' {
    if ((this.byTicket.get(stream.ticketId)?.size ?? 0) >= this.limits.perTicket)
      return 'ticket_limit';
    if ((this.byTenant.get(stream.tenantId)?.size ?? 0) >= this.limits.perTenant)
      return 'tenant_limit';
    add(this.byTicket, stream.ticketId, stream);
    add(this.byClaim, stream.claimId, stream);
    add(this.byTenant, stream.tenantId, stream);
    return 'ok';
  }

  /** release forgets a stream (idempotent); call it when the stream has closed. */
  release(stream: LiveStream) {
    remove(this.byTicket, stream.ticketId, stream);
    remove(this.byClaim, stream.claimId, stream);
    remove(this.byTenant, stream.tenantId, stream);
  }

  closeTicket(ticketId: string, reason: ViewerCloseReason) {
    for (const s of [...(this.byTicket.get(ticketId) ?? [])]) s.close(reason);
  }

  closeClaim(claimId: string, reason: ViewerCloseReason) {
    for (const s of [...(this.byClaim.get(claimId) ?? [])]) s.close(reason);
  }

  closeAll(reason: ViewerCloseReason) {
    for (const set of [...this.byTicket.values()]) for (const s of [...set]) s.close(reason);
  }

  /** The ids of tickets with at least one open stream. */
  openTicketIds(): string[] {
    return [...this.byTicket.keys()];
  }

  get size(): number {
    let n = 0;
    for (const set of this.byTicket.values()) n += set.size;
    return n;
  }
}

/** The numbers reconcile decides from, for one pool. */
export interface PoolSnapshot {
  min: number;
  initial: number;
  max: number;
  /** Live sandboxes of the current generation. */
  provisioning: number;
  warm: number;
  claimed: number;
  /** Claims waiting for a sandbox. */
  pending: number;
  /** Tenant-wide room left under max_sandboxes. */
  tenantRoom: number;
  /** Provisioning failures in the recent window; many in a row pause creation (bad image). */
  recentFailures: number;
}

export const FAILURE_PAUSE_THRESHOLD = 3;

/**
 * planCreate is the autoscaling rule, as a pure function: keep `initial` sandboxes warm or
 * starting on top of waiting claims, never fewer live than `min`, never more than `max` or the
 * tenant's room. Returns how many sandboxes to create now.
 */
export function planCreate(s: PoolSnapshot): number {
  if (s.recentFailures >= FAILURE_PAUSE_THRESHOLD) return 0;
  const live = s.provisioning + s.warm + s.claimed;
  const forBuffer = s.initial + s.pending - (s.warm + s.provisioning);
  const forMin = s.min - live;
  const wanted = Math.max(forBuffer, forMin, 0);
  return Math.max(0, Math.min(wanted, s.max - live, s.tenantRoom));
}

import type { WebhookEventDataOf, WebhookEventType } from '@cubicle/contract/api';
import { newId, sqlOf, type Prisma } from '@cubicle/db';
import { nowOf } from '../context.js';
import {
  insertWebhookDeliveries,
  MAX_WEBHOOKS_PER_TENANT,
  selectHasWebhookTargets,
} from '../repositories/webhooks.js';
import type { OutboxDeps } from '../resources.js';

export { MAX_WEBHOOKS_PER_TENANT };

/**
 * An emitted delivery is leased this long to the job enqueued with it: the relay leaves it
 * alone meanwhile, and takes it over if that job was lost (a process killed before enqueueing).
 */
export const DELIVERY_LEASE_MS = 120_000;

function insertValues<T extends WebhookEventType>(
  tenantId: string,
  type: T,
  data: WebhookEventDataOf<T>,
  at: Date,
  lockedUntil: Date | null,
): [string, string, string[], string, string, string, string | null] {
  const ids = Array.from({ length: MAX_WEBHOOKS_PER_TENANT }, () => newId('webhook_delivery'));
  const body = JSON.stringify({ type, timestamp: at.toISOString(), data });
  return [
    tenantId,
    type,
    ids,
    newId('webhook_event'),
    body,
    at.toISOString(),
    lockedUntil?.toISOString() ?? null,
  ];
}

/**
 * recordWebhookEvent writes the event to the outbox inside the caller's transaction: one
 * delivery per enabled endpoint of the tenant subscribed to `type`, committed (or rolled back)
 * with the state change it announces. The worker's relay enqueues it within its interval.
 * `data` is built only when some endpoint listens, so a tenant without webhooks pays one query.
 */
export async function recordWebhookEvent<T extends WebhookEventType>(
  tx: Prisma.TransactionClient,
  tenantId: string,
  type: T,
  data: WebhookEventDataOf<T> | (() => Promise<WebhookEventDataOf<T> | null>),
  at: Date = new Date(),
): Promise<string[]> {
  if (typeof data === 'function') {
    const probe = await sqlOf(tx).row(selectHasWebhookTargets, tenantId, type);
    if (!probe?.yes) return [];
    const built = await data();
    if (!built) return [];
    data = built;
  }
  const rows = await sqlOf(tx).rows(
    insertWebhookDeliveries,
    ...insertValues(tenantId, type, data, at, null),
  );
  return rows.map((r) => r.id);
}

/**
 * emitWebhookEvent records an event outside any transaction (after the state change has
 * committed) and enqueues its deliveries at once. For a change that has its own transaction,
 * prefer recordWebhookEvent inside it: nothing is lost if the process dies between the two.
 * The runs engineer's `run.finished` goes through here (or recordWebhookEvent). It never throws:
 * the state change it announces has happened whatever becomes of the announcement; a failed
 * enqueue is healed by the relay once the lease passes.
 */
export async function emitWebhookEvent<T extends WebhookEventType>(
  deps: OutboxDeps,
  tenantId: string,
  type: T,
  data: WebhookEventDataOf<T> | (() => Promise<WebhookEventDataOf<T> | null>),
): Promise<string[]> {
  try {
    const sql = sqlOf(deps.db);
    if (typeof data === 'function') {
      // The common case, a tenant without webhooks, costs this one named statement.
      const probe = await sql.row(selectHasWebhookTargets, tenantId, type);
      if (!probe?.yes) return [];
      const built = await data();
      if (!built) return [];
      data = built;
    }
    const at = nowOf(deps);
    const rows = await sql.rows(
      insertWebhookDeliveries,
      ...insertValues(tenantId, type, data, at, new Date(at.getTime() + DELIVERY_LEASE_MS)),
    );
    await Promise.all(
      rows.map((r) =>
        deps.queues
          .enqueue('webhook.deliver', { tenant_id: tenantId, delivery_id: r.id, attempt: 1 })
          .catch(() => undefined),
      ),
    );
    return rows.map((r) => r.id);
  } catch {
    return [];
  }
}

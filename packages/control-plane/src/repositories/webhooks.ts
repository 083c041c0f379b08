import { statement } from '@cubicle/db';

// The webhook tables' raw statements: the outbox (`webhook_deliveries` written with the event
// they announce) and the relay's lease. Plain row reads and writes of endpoints, deliveries and
// attempts use the ORM; a tenant's creates lock with lockForTransaction (transaction-locks.ts).

/** A tenant has at most this many endpoints (createWebhook enforces it under a tenant lock). */
export const MAX_WEBHOOKS_PER_TENANT = 20;

/**
 * Whether any enabled endpoint of the tenant subscribes to an event type (a tenant without
 * webhooks pays this one statement). Runs on the pool and in Prisma transactions alike.
 */
export const selectHasWebhookTargets = statement<
  { yes: boolean },
  [tenantId: string, eventType: string]
>(
  'cubicle_webhook_targets_v1',
  `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE tenant_id = $1 AND enabled AND $2 = ANY(events)) AS yes`,
);

/**
 * One delivery row per subscribed endpoint, in one statement. Ids come pre-made (one per
 * possible endpoint) so the statement needs no second round trip; `LIMIT` keeps it within them.
 * Times are ISO strings (the same on the pool and in a Prisma transaction); `lockedUntil` null
 * leaves the delivery to the relay at once.
 */
export const insertWebhookDeliveries = statement<
  { id: string },
  [
    tenantId: string,
    eventType: string,
    deliveryIds: string[],
    eventId: string,
    body: string,
    at: string,
    lockedUntil: string | null,
  ]
>(
  'cubicle_webhook_insert_v1',
  `
  WITH targets AS (
    SELECT id, row_number() OVER (ORDER BY id) AS n FROM webhook_endpoints
    WHERE tenant_id = $1 AND enabled AND $2 = ANY(events)
    ORDER BY id LIMIT ${MAX_WEBHOOKS_PER_TENANT}
  )
  INSERT INTO webhook_deliveries
    (id, tenant_id, webhook_id, event_id, event_type, body, next_attempt_at, locked_until, created_at, updated_at)
  SELECT ($3::text[])[t.n], $1, t.id, $4, $2, $5, $6::timestamptz, $7::timestamptz, $6::timestamptz, $6::timestamptz
  FROM targets t
  RETURNING id`,
);

/**
 * Leases the due pending deliveries no job holds (at most `limit`, oldest due first) and
 * answers them: leasing and selecting are one statement, so two relays never take the same.
 */
export const leaseDueWebhookDeliveries = statement<
  { id: string; tenant_id: string; attempt_count: number },
  [lease: Date, now: Date, limit: number]
>(
  'cubicle_relay_webhook_deliveries_v1',
  `UPDATE webhook_deliveries SET locked_until = $1::timestamptz, updated_at = $2::timestamptz
   WHERE id IN (
     SELECT id FROM webhook_deliveries
     WHERE status = 'pending' AND next_attempt_at <= $2::timestamptz
       AND (locked_until IS NULL OR locked_until <= $2::timestamptz)
     ORDER BY next_attempt_at LIMIT $3
     FOR UPDATE SKIP LOCKED
   )
   RETURNING id, tenant_id, attempt_count`,
);

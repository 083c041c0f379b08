import type { WebhookDelivery } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { OutboxDeps } from '../resources.js';
import { DELIVERY_LEASE_MS } from './emit-webhook-event.js';
import { toDeliveryView } from './manage-webhooks.js';

const ATTEMPTS = {
  orderBy: { attempt: 'asc' },
  select: {
    attempt: true,
    statusCode: true,
    error: true,
    responseExcerpt: true,
    durationMs: true,
    createdAt: true,
  },
} as const;

/**
 * retryWebhookDelivery makes a pending or failed delivery due now and queues its next attempt at
 * once (a person pressing "Retry" after fixing their receiver should not wait for the backoff).
 * The row is leased to that job like a fresh event's, so the relay heals a lost enqueue; a job
 * already scheduled for the same attempt finds it taken and stops (deliverWebhook's attempt
 * check). Delivered deliveries are 409 `conflict` (receivers already have the event), and so are
 * those of a disabled endpoint, whose attempt would be refused anyway.
 */
export async function retryWebhookDelivery(
  deps: OutboxDeps,
  tenantId: string,
  webhookId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const now = deps.now?.() ?? new Date();
  const row = await deps.db.webhookDelivery.findFirst({
    where: { id: deliveryId, webhookId, tenantId },
    include: { webhook: { select: { enabled: true } } },
  });
  if (!row) throw new AppError('not_found', `delivery ${deliveryId} not found`);
  if (row.status === 'delivered')
    throw new AppError('conflict', 'the delivery was delivered; nothing to retry');
  if (!row.webhook.enabled)
    throw new AppError('conflict', 'the endpoint is disabled: enable it before retrying');
  const { count } = await deps.db.webhookDelivery.updateMany({
    where: { id: deliveryId, tenantId, status: row.status, attemptCount: row.attemptCount },
    data: {
      status: 'pending',
      nextAttemptAt: now,
      finishedAt: null,
      lockedUntil: new Date(now.getTime() + DELIVERY_LEASE_MS),
      updatedAt: now,
    },
  });
  if (count === 0)
    throw new AppError('conflict', 'the delivery changed while retrying it; look again');
  await deps.queues
    .enqueue('webhook.deliver', {
      tenant_id: tenantId,
      delivery_id: deliveryId,
      attempt: row.attemptCount + 1,
    })
    // The lease passes and the relay enqueues it: the retry is recorded either way.
    .catch(() => undefined);
  const updated = await deps.db.webhookDelivery.findFirstOrThrow({
    where: { id: deliveryId, tenantId },
    include: { attempts: ATTEMPTS },
  });
  return toDeliveryView(updated);
}

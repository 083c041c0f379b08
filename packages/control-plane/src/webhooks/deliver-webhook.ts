import { sqlOf, type WebhookEndpoint } from '@cubicle/db';
import { open, type Keyring } from '../crypto/keyring.js';
import { leaseDueWebhookDeliveries } from '../repositories/webhooks.js';
import { DELIVERY_LEASE_MS } from './emit-webhook-event.js';
import { postWebhook, type PostOutcome } from './post-webhook.js';
import { DEFAULT_RETRY_POLICY, nextAttemptAt } from './retry-schedule.js';
import { signWebhook } from './webhook-signature.js';

import type { WebhookDeliveryOptions, WebhookWorkerDeps } from '../resources.js';

export type { WebhookDeliveryOptions };

export const DEFAULT_DELIVERY_OPTIONS: WebhookDeliveryOptions = {
  allowPrivate: false,
  timeoutMs: 10_000,
  retry: DEFAULT_RETRY_POLICY,
};

export type DeliveryResult = 'delivered' | 'retrying' | 'failed' | 'skipped';

/**
 * signingSecrets opens the endpoint's current secret, and the previous one while its grace
 * period lasts; null when the keyring lacks the key they were sealed with.
 */
function signingSecrets(keyring: Keyring, endpoint: WebhookEndpoint, at: Date): string[] | null {
  try {
    const secrets = [open(keyring, endpoint.secretCiphertext, endpoint.id)];
    if (
      endpoint.previousSecretCiphertext &&
      endpoint.previousSecretExpiresAt &&
      endpoint.previousSecretExpiresAt > at
    )
      secrets.push(open(keyring, endpoint.previousSecretCiphertext, endpoint.id));
    return secrets;
  } catch {
    return null;
  }
}

const spanOf = (ms: number) =>
  ms >= 3600_000 ? `${Math.round(ms / 3600_000)} h` : `${Math.round(ms / 1000)} s`;

/** Error texts are short: they are for a person reading the deliveries list. */
const clip = (text: string, max = 500) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * deliverWebhook makes attempt `attempt` of one delivery: it takes the delivery (only if it is
 * still pending with `attempt - 1` attempts made, so a stale or duplicate job stops here), signs
 * the stored body per Standard Webhooks with the endpoint's secret (and the previous one during
 * a rotation), POSTs it to the checked address, and records the attempt. A 2xx delivers; any
 * other answer or no answer schedules the next attempt with exponential backoff until 24 h after
 * the event, then fails; an address that is not allowed fails at once.
 */
export async function deliverWebhook(
  deps: WebhookWorkerDeps,
  deliveryId: string,
  attempt: number,
): Promise<DeliveryResult> {
  const options = { ...DEFAULT_DELIVERY_OPTIONS, ...deps.webhooks };
  const now = () => deps.now?.() ?? new Date();
  const started = now();
  // The lease covers this attempt; the relay re-enqueues only after it passes.
  const leaseUntil = new Date(started.getTime() + options.timeoutMs + DELIVERY_LEASE_MS);
  const { count } = await deps.db.webhookDelivery.updateMany({
    where: { id: deliveryId, status: 'pending', attemptCount: attempt - 1 },
    data: { lockedUntil: leaseUntil },
  });
  if (count === 0) return 'skipped';
  const delivery = await deps.db.webhookDelivery.findUnique({
    where: { id: deliveryId },
    include: { webhook: true },
  });
  if (!delivery) return 'skipped';
  const endpoint = delivery.webhook;

  let outcome: PostOutcome;
  if (!endpoint.enabled) {
    outcome = { kind: 'refused', error: 'the endpoint is disabled', durationMs: 0 };
  } else {
    const secrets = signingSecrets(deps.keyring, endpoint, started);
    if (!secrets) {
      // A keyring without the endpoint's key (misconfigured worker): retried, so a fixed
      // keyring delivers within the window.
      outcome = {
        kind: 'failed',
        error: "the signing secret does not open with this worker's keyring",
        durationMs: 0,
      };
    } else {
      outcome = await postWebhook({
        url: endpoint.url,
        body: delivery.body,
        headers: {
          ...signWebhook(
            secrets,
            delivery.eventId,
            Math.floor(started.getTime() / 1000),
            delivery.body,
          ),
        },
        timeoutMs: options.timeoutMs,
        allowPrivate: options.allowPrivate,
      });
    }
  }
  const finished = now();
  const ok = outcome.kind === 'answered' && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const next =
    ok || outcome.kind === 'refused'
      ? null
      : nextAttemptAt(options.retry, attempt, delivery.createdAt, finished);
  const status = ok ? 'delivered' : next ? 'pending' : 'failed';
  const statusCode = outcome.kind === 'answered' ? outcome.statusCode : null;
  const error =
    outcome.kind === 'answered'
      ? ok
        ? null
        : `answered ${outcome.statusCode}`
      : clip(outcome.error);
  const lastError =
    status === 'failed' && outcome.kind !== 'refused'
      ? `${error}; retries ended ${spanOf(options.retry.windowMs)} after the event`
      : error;

  const recorded = await deps.db.$transaction(async (tx) => {
    const { count: updated } = await tx.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending', attemptCount: attempt - 1 },
      data: {
        status,
        attemptCount: attempt,
        lastStatusCode: statusCode,
        lastError: lastError,
        nextAttemptAt: next,
        // While the next attempt's job waits, the relay leaves the row alone (and heals it after).
        lockedUntil: next ? new Date(next.getTime() + DELIVERY_LEASE_MS) : null,
        finishedAt: next ? null : finished,
      },
    });
    if (updated === 0) return false;
    await tx.webhookAttempt.create({
      data: {
        tenantId: delivery.tenantId,
        deliveryId,
        attempt,
        statusCode,
        error,
        responseExcerpt: outcome.kind === 'answered' ? outcome.excerpt || null : null,
        durationMs: outcome.durationMs,
        createdAt: finished,
      },
    });
    return true;
  });
  if (!recorded) return 'skipped';
  if (next) {
    await deps.queues
      .enqueue(
        'webhook.deliver',
        { tenant_id: delivery.tenantId, delivery_id: deliveryId, attempt: attempt + 1 },
        { delayMs: Math.max(1, next.getTime() - finished.getTime()) },
      )
      .catch(() => undefined);
    return 'retrying';
  }
  return ok ? 'delivered' : 'failed';
}

/**
 * relayWebhookDeliveries enqueues every pending delivery that is due and not leased to a job:
 * those recorded inside a transaction (recordWebhookEvent), and those whose job was lost with a
 * killed process. Leasing and selecting are one statement, so two relays never enqueue the same
 * attempt twice; a duplicate job would still stop at deliverWebhook's attempt check.
 */
export async function relayWebhookDeliveries(
  deps: WebhookWorkerDeps,
  limit = 500,
): Promise<number> {
  const now = deps.now?.() ?? new Date();
  const lease = new Date(now.getTime() + DELIVERY_LEASE_MS);
  const due = await sqlOf(deps.db).rows(leaseDueWebhookDeliveries, lease, now, limit);
  await Promise.all(
    due.map((d) =>
      deps.queues.enqueue('webhook.deliver', {
        tenant_id: d.tenant_id,
        delivery_id: d.id,
        attempt: d.attempt_count + 1,
      }),
    ),
  );
  return due.length;
}

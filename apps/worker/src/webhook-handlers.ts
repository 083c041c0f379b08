import {
  deliverWebhook,
  relayWebhookDeliveries,
  type WebhookDeliveryOptions,
  type WebhookWorkerDeps,
} from '@cubicle/control-plane';
import type { JobHandlers } from '@cubicle/queue';
import type { WorkerEnv } from './env.js';

/** webhookOptionsOf reads the delivery settings from the worker's environment. */
export function webhookOptionsOf(env: WorkerEnv): WebhookDeliveryOptions {
  return {
    allowPrivate: env.CUBICLE_WEBHOOKS_ALLOW_PRIVATE,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retry: {
      baseMs: env.WEBHOOK_RETRY_BASE_MS,
      windowMs: env.WEBHOOK_RETRY_WINDOW_MS,
      maxGapMs: Math.min(2 * 3600_000, env.WEBHOOK_RETRY_WINDOW_MS),
    },
  };
}

/**
 * buildWebhookHandlers maps the webhook jobs to the control plane: one delivery attempt, and the
 * periodic relay that enqueues what the outbox holds due (the database decides what is due).
 * The delivery settings are the resources' `webhooks` (webhookOptionsOf at start-up).
 */
export function buildWebhookHandlers(deps: WebhookWorkerDeps): JobHandlers {
  return {
    'webhook.deliver': (p) => deliverWebhook(deps, p.delivery_id, p.attempt),
    'webhooks.relay': async () => ({ enqueued: await relayWebhookDeliveries(deps) }),
  };
}

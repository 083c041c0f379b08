import type {
  CreateWebhookRequest,
  ListQuery,
  UpdateWebhookRequest,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookEventType,
  WebhookWithSecret,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, type Db, type WebhookDelivery as DeliveryRow } from '@cubicle/db';
import { seal } from '../crypto/keyring.js';
import type { WebhookApiDeps } from '../resources.js';
import { pageById } from '../page-by-id.js';
import { lockForTransaction } from '../repositories/transaction-locks.js';
import { AddressRefusal, hostOf, resolveDeliverable } from './address-guard.js';
import { MAX_WEBHOOKS_PER_TENANT } from './emit-webhook-event.js';
import { newWebhookSecret } from './webhook-signature.js';

/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600_000;

/** Operator setting (CUBICLE_WEBHOOKS_ALLOW_PRIVATE): accept private and loopback destinations. */
const allowPrivateOf = (deps: WebhookApiDeps) => deps.webhooks?.allowPrivate ?? false;

type EndpointRow = NonNullable<Awaited<ReturnType<Db['webhookEndpoint']['findFirst']>>>;

function toView(row: EndpointRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEventType[],
    description: row.description,
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * assertDeliverableUrl refuses a URL whose host is, or resolves to, an address webhooks may not
 * reach (the delivery checks again after its own resolution). A name that does not resolve is
 * refused too: it could not be delivered to, and would be checked only at delivery otherwise.
 */
export async function assertDeliverableUrl(url: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  try {
    await resolveDeliverable(hostOf(new URL(url)), false);
  } catch (err) {
    if (!(err instanceof AddressRefusal)) throw err;
    // Never the resolved address: see AddressRefusal.
    throw new AppError('webhook_url_refused', err.message, { host: err.host, reason: err.kind });
  }
}

async function findEndpoint(db: Db, tenantId: string, id: string): Promise<EndpointRow> {
  const row = await db.webhookEndpoint.findFirst({ where: { id, tenantId } });
  if (!row) throw new AppError('not_found', `webhook ${id} not found`);
  return row;
}

/** createWebhook adds an endpoint; the answer carries its signing secret, which nothing shows again. */
export async function createWebhook(
  deps: WebhookApiDeps,
  tenantId: string,
  body: CreateWebhookRequest,
): Promise<WebhookWithSecret> {
  await assertDeliverableUrl(body.url, allowPrivateOf(deps));
  const id = newId('webhook');
  const secret = newWebhookSecret();
  const row = await deps.db.$transaction(async (tx) => {
    // Serialises creates of one tenant, so the count below is a hard limit.
    await lockForTransaction(tx, `webhooks:${tenantId}`);
    const used = await tx.webhookEndpoint.count({ where: { tenantId } });
    if (used >= MAX_WEBHOOKS_PER_TENANT)
      throw new AppError(
        'quota_exceeded',
        `a tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhook endpoints`,
        { quota: 'webhooks', limit: MAX_WEBHOOKS_PER_TENANT, used },
      );
    return tx.webhookEndpoint.create({
      data: {
        id,
        tenantId,
        url: body.url,
        description: body.description ?? null,
        events: body.events,
        secretCiphertext: seal(deps.keyring, secret, id),
      },
    });
  });
  return { ...toView(row), secret };
}

export async function listWebhooks(deps: WebhookApiDeps, tenantId: string, query: ListQuery) {
  const rows = await deps.db.webhookEndpoint.findMany({
    where: { tenantId, ...(query.cursor ? { id: { lt: query.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, toView);
}

export async function getWebhook(deps: WebhookApiDeps, tenantId: string, id: string) {
  return toView(await findEndpoint(deps.db, tenantId, id));
}

/** updateWebhook changes what the body gives; a new URL is checked like a created one. */
export async function updateWebhook(
  deps: WebhookApiDeps,
  tenantId: string,
  id: string,
  body: UpdateWebhookRequest,
): Promise<Webhook> {
  await findEndpoint(deps.db, tenantId, id);
  if (body.url !== undefined) await assertDeliverableUrl(body.url, allowPrivateOf(deps));
  const { count } = await deps.db.webhookEndpoint.updateMany({
    where: { id, tenantId },
    data: {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.events !== undefined ? { events: body.events } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    },
  });
  if (count === 0) throw new AppError('not_found', `webhook ${id} not found`);
  return getWebhook(deps, tenantId, id);
}

/** deleteWebhook removes an endpoint with its deliveries; queued attempts find nothing and stop. */
export async function deleteWebhook(deps: WebhookApiDeps, tenantId: string, id: string) {
  const { count } = await deps.db.webhookEndpoint.deleteMany({ where: { id, tenantId } });
  if (count === 0) throw new AppError('not_found', `webhook ${id} not found`);
}

/**
 * rotateWebhookSecret makes a new signing secret (shown once). The previous one keeps signing
 * next to it for 24 hours, so receivers can switch without losing a delivery.
 */
export async function rotateWebhookSecret(
  deps: WebhookApiDeps,
  tenantId: string,
  id: string,
): Promise<WebhookWithSecret> {
  const current = await findEndpoint(deps.db, tenantId, id);
  const now = deps.now?.() ?? new Date();
  const secret = newWebhookSecret();
  const { count } = await deps.db.webhookEndpoint.updateMany({
    where: { id, tenantId, secretCiphertext: { equals: current.secretCiphertext } },
    data: {
      secretCiphertext: seal(deps.keyring, secret, id),
      previousSecretCiphertext: current.secretCiphertext,
      previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS),
    },
  });
  if (count === 0)
    throw new AppError('conflict', 'the secret was rotated concurrently; rotate again');
  return { ...(await getWebhook(deps, tenantId, id)), secret };
}

export type DeliveryWithAttempts = DeliveryRow & {
  attempts: {
    attempt: number;
    statusCode: number | null;
    error: string | null;
    responseExcerpt: string | null;
    durationMs: number;
    createdAt: Date;
  }[];
};

/** toDeliveryView is a delivery as the API shows it, attempts in order. */
export function toDeliveryView(row: DeliveryWithAttempts): WebhookDelivery {
  return {
    id: row.id,
    webhook_id: row.webhookId,
    event_id: row.eventId,
    event_type: row.eventType as WebhookEventType,
    status: row.status,
    attempt_count: row.attemptCount,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    next_attempt_at:
      row.status === 'pending' && row.nextAttemptAt ? row.nextAttemptAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    finished_at: row.finishedAt ? row.finishedAt.toISOString() : null,
    attempts: row.attempts.map((a) => ({
      attempt: a.attempt,
      status_code: a.statusCode,
      error: a.error,
      response_excerpt: a.responseExcerpt,
      duration_ms: a.durationMs,
      at: a.createdAt.toISOString(),
    })),
  };
}

/** listWebhookDeliveries pages an endpoint's deliveries newest first, each with its attempts. */
export async function listWebhookDeliveries(
  deps: WebhookApiDeps,
  tenantId: string,
  id: string,
  query: WebhookDeliveryListQuery,
) {
  await findEndpoint(deps.db, tenantId, id);
  const rows = await deps.db.webhookDelivery.findMany({
    where: {
      webhookId: id,
      tenantId,
      ...(query.status ? { status: query.status } : {}),
      ...(query.cursor ? { id: { lt: query.cursor } } : {}),
    },
    include: {
      attempts: {
        orderBy: { attempt: 'asc' },
        select: {
          attempt: true,
          statusCode: true,
          error: true,
          responseExcerpt: true,
          durationMs: true,
          createdAt: true,
        },
      },
    },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, toDeliveryView);
}

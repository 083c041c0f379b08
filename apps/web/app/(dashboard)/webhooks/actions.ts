'use server';

import { WebhookDeliveryId, WebhookEventType, WebhookId } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

const isWebhookId = (id: string) => WebhookId.safeParse(id).success;

/** SecretState carries a signing secret to the form once (create, rotate); nothing keeps it. */
export type SecretState =
  { ok: true; secret: string; url: string } | { ok: false; error: string } | null;

/** createWebhook adds an endpoint for the chosen events; its secret is shown once. */
export async function createWebhook(_prev: SecretState, form: FormData): Promise<SecretState> {
  const session = await requireSession();
  // Unknown names are dropped here; an empty list is then the API's to refuse, with its message.
  const events = form
    .getAll('event')
    .map(String)
    .filter((e): e is WebhookEventType => WebhookEventType.safeParse(e).success);
  const description = String(form.get('description') ?? '').trim();
  try {
    const created = await api(session, (c) =>
      c.webhooks.create({
        url: String(form.get('url') ?? '').trim(),
        events,
        ...(description ? { description } : {}),
      }),
    );
    revalidatePath('/webhooks');
    return { ok: true, secret: created.secret, url: created.url };
  } catch (error) {
    return failure(error);
  }
}

/** rotateSecret makes a new signing secret (the previous one signs too for 24 h). */
export async function rotateSecret(_prev: SecretState, form: FormData): Promise<SecretState> {
  const session = await requireSession();
  const id = String(form.get('webhook'));
  if (!isWebhookId(id)) return { ok: false, error: 'bad request' };
  try {
    const rotated = await api(session, (c) => c.webhooks.rotateSecret(id));
    return { ok: true, secret: rotated.secret, url: rotated.url };
  } catch (error) {
    return failure(error);
  }
}

/** retryDelivery queues a pending or failed delivery's next attempt now. */
export async function retryDelivery(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const id = String(form.get('webhook'));
  const deliveryId = String(form.get('delivery'));
  if (!isWebhookId(id) || !WebhookDeliveryId.safeParse(deliveryId).success)
    return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.webhooks.retryDelivery(id, deliveryId));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/webhooks');
  return { ok: true, message: 'Queued' };
}

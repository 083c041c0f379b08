import type { BodyOf, QueryOf } from './operations.js';
import type { CallOptions, Transport } from './transport.js';

/** Tenant: the caller's own tenant (embed origins, quotas). */
export class TenantApi {
  constructor(readonly t: Transport) {}
  get(options?: CallOptions) {
    return this.t.call('getTenant', {}, options);
  }
  update(body: BodyOf<'updateTenant'>, options?: CallOptions) {
    return this.t.call('updateTenant', { body }, options);
  }
}

/** ApiKeys: the tenant's keys; a key's secret is shown once, in the answer to `create`. */
export class ApiKeys {
  constructor(readonly t: Transport) {}
  list(query?: QueryOf<'listApiKeys'>, options?: CallOptions) {
    return this.t.paginate('listApiKeys', { query }, options);
  }
  create(body: BodyOf<'createApiKey'>, options?: CallOptions) {
    return this.t.call('createApiKey', { body }, options);
  }
  revoke(id: string, options?: CallOptions) {
    return this.t.call('revokeApiKey', { params: { id } }, options);
  }
}

/** AuditEvents: who did what, newest first. */
export class AuditEvents {
  constructor(readonly t: Transport) {}
  list(query?: QueryOf<'listAuditEvents'>, options?: CallOptions) {
    return this.t.paginate('listAuditEvents', { query }, options);
  }
}

/** Webhooks: signed deliveries of claim and run events to the tenant's endpoints. */
export class Webhooks {
  constructor(readonly t: Transport) {}
  create(body: BodyOf<'createWebhook'>, options?: CallOptions) {
    return this.t.call('createWebhook', { body }, options);
  }
  list(query?: QueryOf<'listWebhooks'>, options?: CallOptions) {
    return this.t.paginate('listWebhooks', { query }, options);
  }
  get(id: string, options?: CallOptions) {
    return this.t.call('getWebhook', { params: { id } }, options);
  }
  update(id: string, body: BodyOf<'updateWebhook'>, options?: CallOptions) {
    return this.t.call('updateWebhook', { params: { id }, body }, options);
  }
  delete(id: string, options?: CallOptions) {
    return this.t.call('deleteWebhook', { params: { id } }, options);
  }
  rotateSecret(id: string, options?: CallOptions) {
    return this.t.call('rotateWebhookSecret', { params: { id } }, options);
  }
  deliveries(id: string, query?: QueryOf<'listWebhookDeliveries'>, options?: CallOptions) {
    return this.t.paginate('listWebhookDeliveries', { params: { id }, query }, options);
  }
  /** retryDelivery queues a pending or failed delivery's next attempt now. */
  retryDelivery(id: string, deliveryId: string, options?: CallOptions) {
    return this.t.call(
      'retryWebhookDelivery',
      { params: { id, delivery_id: deliveryId } },
      options,
    );
  }
}

/** Usage: the tenant's sandbox time per pool, and a pool's recent behaviour. */
export class UsageApi {
  constructor(readonly t: Transport) {}
  get(query?: QueryOf<'getUsage'>, options?: CallOptions) {
    return this.t.call('getUsage', { query }, options);
  }
  poolInsights(name: string, query?: QueryOf<'getPoolInsights'>, options?: CallOptions) {
    return this.t.call('getPoolInsights', { params: { name }, query }, options);
  }
}

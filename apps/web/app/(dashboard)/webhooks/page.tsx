import { WebhookEventType, type Webhook, type WebhookDelivery } from '@cubicle/contract/api';
import { ApiError, api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { AutoRefresh } from '../../components/auto-refresh';
import { retryDelivery } from './actions';
import { CreateWebhookForm, RotateSecretForm } from './secret-forms';

export const metadata = { title: 'Webhooks · Cubicle' };

/** How many of each endpoint's newest deliveries the page shows. */
const DELIVERIES_SHOWN = 20;

const when = (iso: string | null) => (iso ? iso.slice(0, 19).replace('T', ' ') : '—');

function DeliveryRows({
  webhook,
  deliveries,
}: {
  webhook: Webhook;
  deliveries: WebhookDelivery[];
}) {
  return (
    <table data-deliveries={webhook.id}>
      <thead>
        <tr>
          <th>Event</th>
          <th>Status</th>
          <th>Attempts</th>
          <th>Last answer</th>
          <th>Created (UTC)</th>
          <th>Next attempt</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id} data-delivery={d.id} data-status={d.status}>
            <td>
              <span className="mono">{d.event_type}</span>
              <div className="muted mono">{d.event_id}</div>
            </td>
            <td>
              <span
                className={`badge ${d.status === 'delivered' ? 'success' : d.status === 'failed' ? 'failure' : ''}`}
              >
                {d.status}
              </span>
            </td>
            <td>{d.attempt_count}</td>
            <td className="mono">
              {d.last_status_code ?? '—'}
              {d.last_error ? <div className="muted">{d.last_error}</div> : null}
            </td>
            <td className="mono">{when(d.created_at)}</td>
            <td className="mono">{when(d.next_attempt_at)}</td>
            <td>
              {d.status === 'delivered' || !webhook.enabled ? null : (
                <ActionForm action={retryDelivery} submit="Retry" pending="Queueing…">
                  <input type="hidden" name="webhook" value={webhook.id} />
                  <input type="hidden" name="delivery" value={d.id} />
                </ActionForm>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default async function WebhooksPage() {
  const session = await requireSession();
  if (session.role !== 'admin')
    return <p className="alert">Only admin keys can manage webhooks.</p>;
  const webhooks = await api(session, (c) => c.request('listWebhooks', { query: { limit: 50 } }));
  const deliveries = await Promise.all(
    webhooks.data.map((w) =>
      api(session, (c) =>
        c.request('listWebhookDeliveries', {
          params: { id: w.id },
          query: { limit: DELIVERIES_SHOWN },
        }),
      ).catch((error: unknown) => {
        if (error instanceof ApiError) return error;
        throw error;
      }),
    ),
  );
  return (
    <>
      <AutoRefresh seconds={5} />
      <h1>Webhooks</h1>
      <p className="muted">
        Events POSTed to your endpoints, signed per Standard Webhooks. Failed attempts are retried
        with backoff for 24 hours; retry one now once your receiver is fixed.
      </p>
      <CreateWebhookForm eventTypes={WebhookEventType.options} />
      {webhooks.data.length === 0 ? (
        <p className="muted">No endpoints yet.</p>
      ) : (
        webhooks.data.map((webhook, i) => {
          const list = deliveries[i]!;
          return (
            <section key={webhook.id} className="card" data-webhook={webhook.id}>
              <div className="row">
                <div style={{ flex: 1 }}>
                  <h2 className="mono" style={{ margin: 0 }}>
                    {webhook.url}
                  </h2>
                  <div className="muted">
                    {webhook.description ? `${webhook.description} · ` : ''}
                    <span className="mono">{webhook.events.join(', ')}</span> · created{' '}
                    {when(webhook.created_at)}
                  </div>
                </div>
                <span className={`badge ${webhook.enabled ? 'success' : 'failure'}`}>
                  {webhook.enabled ? 'enabled' : 'disabled'}
                </span>
                <RotateSecretForm webhookId={webhook.id} url={webhook.url} />
              </div>
              <h3>Deliveries</h3>
              {list instanceof ApiError ? (
                <p className="alert">Deliveries could not be loaded: {list.message}</p>
              ) : list.data.length === 0 ? (
                <p className="muted">No deliveries yet.</p>
              ) : (
                <DeliveryRows webhook={webhook} deliveries={list.data} />
              )}
            </section>
          );
        })
      )}
    </>
  );
}

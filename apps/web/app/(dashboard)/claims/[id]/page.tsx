import type { Claim } from '@cubicle/contract/api';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ApiError, api } from '../../../../lib/api/client';
import { requireSession } from '../../../../lib/session/current';
import { ActionForm } from '../../../components/action-form';
import { TtlCountdown } from '../../../components/ttl-countdown';
import { ClaimControls } from '../claim-controls';
import { ClaimTimeline } from './claim-timeline';
import { EmbedLinkForm } from './embed-link-form';
import { HandoffBanner } from './handoff-banner';
import { LiveView } from './live-view';
import { NetworkPanel } from './network-panel';
import { RunsPanel } from './runs-panel';
import { ScreenshotPanel } from './screenshot-panel';
import { revokeTicket } from './viewer-actions';

export const metadata = { title: 'Claim · Cubicle' };

/** optional runs a secondary read whose failure must not take the whole page down. */
async function optional<T>(read: Promise<T>): Promise<T | ApiError> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

export default async function ClaimPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await requireSession();
  let claim: Claim;
  try {
    claim = (await api(session, (c) => c.claims.get(id))).data;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 400)) notFound();
    throw error;
  }
  const isActive = claim.status === 'active';
  const [actions, tickets] = await Promise.all([
    optional(
      api(session, (c) => c.request('listClaimActions', { params: { id }, query: { limit: 20 } })),
    ),
    optional(
      api(session, (c) => c.request('listViewerTickets', { params: { id }, query: { limit: 50 } })),
    ),
  ]);
  const handoffs = isActive
    ? await optional(
        api(session, (c) =>
          c.request('listHandoffs', { params: { id }, query: { state: 'active', limit: 1 } }),
        ),
      )
    : null;
  const [runs, secrets, egress, viewers] = await Promise.all([
    optional(
      api(session, (c) => c.request('listClaimRuns', { params: { id }, query: { limit: 20 } })),
    ),
    optional(api(session, (c) => c.request('listSecrets', { params: { id } }))),
    optional(api(session, (c) => c.request('getClaimEgress', { params: { id } }))),
    optional(
      api(session, (c) =>
        c.request('listClaimViewerConnections', { params: { id }, query: { limit: 100 } }),
      ),
    ),
  ]);
  return (
    <>
      <h1>
        {claim.name} <span className={`badge ${claim.status}`}>{claim.status}</span>
      </h1>
      <div className="card">
        <div className="row">
          <div>
            <div className="muted">Claim</div>
            <div className="mono">{claim.id}</div>
          </div>
          <div>
            <div className="muted">Pool</div>
            <div>{claim.pool}</div>
          </div>
          <div>
            <div className="muted">Sandbox</div>
            <div className="mono">{claim.sandbox?.id ?? '—'}</div>
          </div>
          <div>
            <div className="muted">TTL left</div>
            <div>
              {claim.status === 'released' ? (
                claim.release_reason
              ) : (
                <TtlCountdown expiresAt={claim.expires_at} />
              )}
            </div>
          </div>
        </div>
        <div style={{ marginTop: '0.75rem' }}>
          <ClaimControls claim={claim} />
        </div>
      </div>

      {isActive ? (
        <HandoffBanner
          claimId={claim.id}
          initial={handoffs && !(handoffs instanceof ApiError) ? (handoffs.data[0] ?? null) : null}
        />
      ) : null}

      <h2>Timeline</h2>
      <p>
        <Link href={`/claims/${claim.id}/replay`} data-testid="replay-link">
          Replay: the video beside every step
        </Link>
      </p>
      <ClaimTimeline
        claim={claim}
        actions={actions instanceof ApiError ? [] : actions.data}
        tickets={tickets instanceof ApiError ? [] : tickets.data}
        runs={runs instanceof ApiError ? [] : runs.data}
        viewers={viewers instanceof ApiError ? [] : viewers.data}
      />

      {isActive ? (
        <div className="grid2">
          <section>
            <h2>Live view</h2>
            <LiveView claimId={claim.id} />
          </section>
          <section>
            <h2>Screenshot</h2>
            <ScreenshotPanel claimId={claim.id} />
          </section>
        </div>
      ) : (
        <p className="muted">This claim is {claim.status}: there is no desktop to watch.</p>
      )}

      <h2>Recent actions</h2>
      {actions instanceof ApiError ? (
        <p className="alert">Actions could not be loaded: {actions.message}</p>
      ) : actions.data.length === 0 ? (
        <p className="muted">
          No actions yet. Actions made through the API appear here with their results.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Operation</th>
              <th>Effect</th>
              <th>Took</th>
              <th>Request</th>
            </tr>
          </thead>
          <tbody>
            {actions.data.map((a) => (
              <tr key={a.id}>
                <td className="mono">{a.created_at.slice(11, 19)}</td>
                <td className="mono">{a.operation}</td>
                <td>
                  <span
                    className={`badge ${a.effect === 'confirmed' ? 'success' : a.effect === 'refused' ? 'failure' : ''}`}
                  >
                    {a.effect}
                  </span>
                  {a.result.effect === 'refused' ? (
                    <div className="muted">{a.result.error.code}</div>
                  ) : null}
                </td>
                <td>{a.duration_ms} ms</td>
                <td className="mono">{JSON.stringify(a.request).slice(0, 120)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {egress instanceof ApiError ? (
        <p className="muted">Network is not available: {egress.message}</p>
      ) : (
        <NetworkPanel pool={claim.pool} egress={egress} isAdmin={session.role === 'admin'} />
      )}

      <h2>Viewer tickets</h2>
      {isActive ? <EmbedLinkForm claimId={claim.id} /> : null}
      {tickets instanceof ApiError ? (
        <p className="muted">Viewer tickets are not available: {tickets.message}</p>
      ) : tickets.data.length === 0 ? (
        <p className="muted">No viewer tickets.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Ticket</th>
              <th>Mode</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tickets.data.map((t) => (
              <tr key={t.id}>
                <td className="mono">{t.id}</td>
                <td>{t.mode}</td>
                <td>
                  {t.revoked_at ? (
                    <span className="badge failure">revoked</span>
                  ) : (
                    <TtlCountdown expiresAt={t.expires_at} />
                  )}
                </td>
                <td>
                  {t.revoked_at ? null : (
                    <ActionForm
                      action={revokeTicket}
                      submit="Revoke"
                      pending="Revoking…"
                      buttonClass="danger"
                    >
                      <input type="hidden" name="ticket" value={t.id} />
                    </ActionForm>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Runs</h2>
      {runs instanceof ApiError ? (
        <p className="muted">Runs are not available: {runs.message}</p>
      ) : (
        <RunsPanel
          claimId={claim.id}
          isActive={isActive}
          runs={runs.data}
          secretNames={secrets instanceof ApiError ? null : secrets.data.map((s) => s.name)}
        />
      )}
    </>
  );
}

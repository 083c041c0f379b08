'use client';

import { useState, useTransition } from 'react';
import { VncCanvas, type VncStatus } from '../../../components/vnc-canvas';
import { startLiveView, type LiveView as LiveViewTicket } from './viewer-actions';

/**
 * LiveView: the operator picks view or control; the server mints a short ticket with the session's
 * key and noVNC opens the stream. In view mode the proxy drops input whatever this page sends.
 */
export function LiveView({ claimId }: { claimId: string }) {
  const [live, setLive] = useState<LiveViewTicket | null>(null);
  const [status, setStatus] = useState<VncStatus | null>(null);
  const [isPending, startTransition] = useTransition();

  const open = (mode: 'view' | 'control') =>
    startTransition(async () => {
      setLive(null);
      setStatus(null);
      setLive(await startLiveView(claimId, mode));
    });

  const label =
    status === null
      ? ''
      : status.kind === 'connected'
        ? 'live'
        : status.kind === 'connecting'
          ? 'connecting…'
          : 'disconnected';
  return (
    <div>
      <p className="row" style={{ alignItems: 'center' }}>
        <button type="button" onClick={() => open('view')} disabled={isPending}>
          Watch (view only)
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => open('control')}
          disabled={isPending}
        >
          Take control
        </button>
        {live?.ok ? (
          <button
            type="button"
            onClick={() => {
              setLive(null);
              setStatus(null);
            }}
          >
            Stop
          </button>
        ) : null}
        {isPending ? <span className="muted">Minting a ticket…</span> : null}
        {live?.ok ? (
          <span className="muted" data-live-status={status?.kind ?? 'idle'}>
            {live.mode} · {label}
          </span>
        ) : null}
        {live && !live.ok ? (
          <span role="alert" className="error">
            {live.error}
          </span>
        ) : null}
      </p>
      <div className="live">
        {live?.ok ? (
          <VncCanvas
            key={live.ticketId}
            url={live.streamUrl}
            isViewOnly={live.mode === 'view'}
            onStatus={setStatus}
          />
        ) : (
          <p className="embed-note">Not watching.</p>
        )}
      </div>
    </div>
  );
}

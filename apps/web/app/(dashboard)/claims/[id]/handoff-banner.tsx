'use client';

import type { Handoff } from '@cubicle/contract/api';
import { useEffect, useState, useTransition } from 'react';
import { VncCanvas, type VncStatus } from '../../../components/vnc-canvas';
import { activeHandoff, giveBack, takeOver, type TakeOver } from './handoff-actions';

/** How often the page asks whether the agent has asked for a human (one small API read). */
const POLL_MS = 1000;

/**
 * HandoffBanner shows, while the claim's agent has handed its desktop to a human, who is asked
 * and why, with "Take over": a control stream bound to the handoff (keyboard and pointer reach
 * the desktop; each input renews the lease) and "Return to agent" with a note. It polls for a
 * handoff so the banner appears without a reload, and goes away when the handoff ends (returned
 * here or elsewhere, or its lease expired: the server then closes the control stream).
 */
export function HandoffBanner({ claimId, initial }: { claimId: string; initial: Handoff | null }) {
  const [handoff, setHandoff] = useState<Handoff | null>(initial);
  const [control, setControl] = useState<TakeOver | null>(null);
  const [status, setStatus] = useState<VncStatus | null>(null);
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [isPending, startTransition] = useTransition();

  useEffect(() => {
    let isCancelled = false;
    const timer = setInterval(() => {
      if (document.visibilityState !== 'visible') return;
      void activeHandoff(claimId).then((next) => {
        if (isCancelled) return;
        setHandoff((now) => (now?.id === next?.id ? now : next));
      });
    }, POLL_MS);
    return () => {
      isCancelled = true;
      clearInterval(timer);
    };
  }, [claimId]);

  useEffect(() => {
    if (!handoff) setControl(null);
  }, [handoff]);

  if (!handoff) return null;
  const label =
    status?.kind === 'connected'
      ? 'you have control'
      : status?.kind === 'connecting'
        ? 'connecting…'
        : status
          ? 'disconnected'
          : '';
  return (
    <section className="alert handoff" role="alert" data-testid="handoff-banner">
      <p>
        <strong>The agent asks for a human.</strong> {handoff.reason}
        {handoff.for ? <span className="muted"> · for {handoff.for}</span> : null}
      </p>
      <p className="row" style={{ alignItems: 'center' }}>
        {control?.ok ? null : (
          <button
            type="button"
            className="primary"
            disabled={isPending}
            onClick={() =>
              startTransition(async () => {
                setError(null);
                const next = await takeOver(claimId, handoff.id);
                if (!next.ok) setError(next.error);
                setControl(next);
              })
            }
          >
            Take over
          </button>
        )}
        <input
          aria-label="Note for the agent"
          placeholder="Note for the agent"
          value={note}
          maxLength={4000}
          onChange={(e) => setNote(e.target.value)}
        />
        <button
          type="button"
          disabled={isPending}
          onClick={() =>
            startTransition(async () => {
              const done = await giveBack(claimId, handoff.id, note);
              if (!done.ok) return setError(done.error);
              setHandoff(null);
              setNote('');
            })
          }
        >
          Return to agent
        </button>
        {control?.ok ? (
          <span className="muted" data-control-status={status?.kind ?? 'idle'}>
            {label}
          </span>
        ) : null}
        {error ? <span className="error">{error}</span> : null}
      </p>
      {control?.ok ? (
        <div className="live">
          <VncCanvas
            key={control.ticketId}
            url={control.streamUrl}
            isViewOnly={false}
            onStatus={setStatus}
            className="vnc-canvas handoff-canvas"
          />
        </div>
      ) : null}
    </section>
  );
}

'use client';

import { useCallback, useEffect, useState } from 'react';
import { VncCanvas, type VncStatus } from '../../components/vnc-canvas';
import { ticketState } from './actions';

type State =
  | 'active'
  | 'connecting'
  | 'disconnected'
  | 'expired'
  | 'ended'
  | 'revoked'
  | 'invalid'
  | 'unavailable';

const MESSAGES: Record<Exclude<State, 'active' | 'connecting'>, { title: string; text: string }> = {
  expired: { title: 'Live view expired', text: 'This link has expired. Ask for a new one.' },
  ended: { title: 'Session ended', text: 'The desktop this link showed has been released.' },
  revoked: { title: 'Live view revoked', text: 'This link was revoked by its owner.' },
  invalid: { title: 'Invalid link', text: 'This live view link is not valid.' },
  unavailable: { title: 'Unavailable', text: 'The live view cannot be reached right now.' },
  disconnected: { title: 'Connection lost', text: 'The stream closed.' },
};

interface Props {
  ticket: string;
  initialState: Exclude<State, 'connecting' | 'disconnected'>;
  streamUrl?: string;
  expiresAt?: string;
  /**
   * The page sends keyboard and pointer: only for `mode=control` with a control ticket bound to a
   * handoff (the server forwards a handoff ticket's input only while the handoff is active).
   */
  isControl?: boolean;
}

/**
 * EmbedViewer shows the stream while the ticket is active and a clear message otherwise. When
 * the stream closes it asks the API why (expired, revoked, ended) instead of guessing.
 */
export function EmbedViewer({ ticket, initialState, streamUrl, expiresAt, isControl }: Props) {
  const [state, setState] = useState<State>(
    initialState === 'active' ? 'connecting' : initialState,
  );
  const [attempt, setAttempt] = useState(0);

  const onStatus = useCallback(
    (status: VncStatus) => {
      if (status.kind === 'connected') setState('active');
      if (status.kind !== 'disconnected') return;
      setState('disconnected');
      void ticketState(ticket).then((next) => {
        if (next !== 'active') setState(next);
      });
    },
    [ticket],
  );

  // The server closes the stream at expiry; this shows the right words even if the close is lost.
  useEffect(() => {
    if (!expiresAt) return;
    const ms = Date.parse(expiresAt) - Date.now();
    const timer = setTimeout(() => setState('expired'), Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    return () => clearTimeout(timer);
  }, [expiresAt]);

  const isStreaming = streamUrl && (state === 'active' || state === 'connecting');
  const message = state === 'active' || state === 'connecting' ? null : MESSAGES[state];
  return (
    <main className="embed" data-state={state} data-mode={isControl ? 'control' : 'view'}>
      {isStreaming ? (
        <VncCanvas
          key={attempt}
          url={streamUrl}
          isViewOnly={!isControl}
          onStatus={onStatus}
          className="embed-canvas"
        />
      ) : null}
      {state === 'connecting' ? <p className="embed-note">Connecting…</p> : null}
      {message ? (
        <div className="embed-message" role="status">
          <h1>{message.title}</h1>
          <p>{message.text}</p>
          {state === 'disconnected' && streamUrl ? (
            <button
              type="button"
              onClick={() => {
                setState('connecting');
                setAttempt((n) => n + 1);
              }}
            >
              Reconnect
            </button>
          ) : null}
        </div>
      ) : null}
    </main>
  );
}

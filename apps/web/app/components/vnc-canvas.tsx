'use client';

import type RFB from '@novnc/novnc';
import { useEffect, useRef } from 'react';

export type VncStatus =
  { kind: 'connecting' } | { kind: 'connected' } | { kind: 'disconnected'; isClean: boolean };

interface Props {
  /** The API's stream URL with the ticket (ws:// or wss://). */
  url: string;
  /** noVNC's viewOnly: the browser sends no input. For view tickets the server drops input anyway. */
  isViewOnly: boolean;
  onStatus?: (status: VncStatus) => void;
  className?: string;
}

/**
 * VncCanvas connects noVNC to a viewer stream and draws the desktop scaled to its box. noVNC is
 * loaded on the client only (it touches window at import) and disconnected on unmount.
 */
export function VncCanvas({ url, isViewOnly, onStatus, className }: Props) {
  const target = useRef<HTMLDivElement>(null);
  const statusRef = useRef(onStatus);
  statusRef.current = onStatus;

  useEffect(() => {
    let isCancelled = false;
    let rfb: RFB | undefined;
    statusRef.current?.({ kind: 'connecting' });
    void import('@novnc/novnc').then(({ default: Rfb }) => {
      if (isCancelled || !target.current) return;
      rfb = new Rfb(target.current, url, { shared: true, wsProtocols: ['binary'] });
      rfb.viewOnly = isViewOnly;
      rfb.scaleViewport = true;
      rfb.resizeSession = false;
      rfb.focusOnClick = !isViewOnly;
      rfb.background = '#000';
      rfb.addEventListener('connect', () => statusRef.current?.({ kind: 'connected' }));
      rfb.addEventListener('disconnect', (event) => {
        const detail = (event as CustomEvent<{ clean: boolean }>).detail;
        statusRef.current?.({ kind: 'disconnected', isClean: detail?.clean ?? false });
      });
    });
    return () => {
      isCancelled = true;
      rfb?.disconnect();
    };
  }, [url, isViewOnly]);

  return <div ref={target} className={className ?? 'vnc-canvas'} data-testid="vnc" />;
}

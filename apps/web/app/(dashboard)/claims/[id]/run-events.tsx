'use client';

import { useEffect, useRef, useState } from 'react';

interface Event {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * RunEvents follows one run's events live (EventSource through this app's relay, which resumes
 * with Last-Event-ID after a drop), stdout and stderr in their colours, scrolled to the newest
 * line unless the reader scrolled up, and the exit code once it has one.
 */
export function RunEvents({ claimId, runId }: { claimId: string; runId: string }) {
  const [events, setEvents] = useState<Event[]>([]);
  const [ended, setEnded] = useState(false);
  const box = useRef<HTMLPreElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    const source = new EventSource(`/claims/${claimId}/runs/${runId}/events`);
    const onEvent = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as Event;
      setEvents((prev) => (prev.some((e) => e.seq === event.seq) ? prev : [...prev, event]));
    };
    for (const type of ['status', 'stdout', 'stderr', 'exit'])
      source.addEventListener(type, onEvent as EventListener);
    source.addEventListener('end', () => {
      setEnded(true);
      source.close();
    });
    return () => source.close();
  }, [claimId, runId]);

  useEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [events]);

  const exit = events.find((e) => e.type === 'exit');
  const status = [...events].reverse().find((e) => e.type === 'status');
  return (
    <div className="run-events" data-run={runId}>
      <div className="muted">
        <span className="mono" data-testid="run-status">
          {String(status?.data.status ?? 'connecting')}
          {status?.data.reason ? ` (${String(status.data.reason)})` : ''}
        </span>
        {exit ? (
          <span className="mono" data-testid="run-exit">
            {' '}
            · exit code {exit.data.exit_code === null ? '—' : String(exit.data.exit_code)}
            {exit.data.signal ? ` · ${String(exit.data.signal)}` : ''}
          </span>
        ) : null}
        {ended ? null : <span> · live</span>}
      </div>
      <pre
        ref={box}
        className="mono run-output"
        style={{ maxHeight: '20rem', overflow: 'auto', background: '#111', padding: '0.5rem' }}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
        }}
      >
        {events
          .filter((e) => e.type === 'stdout' || e.type === 'stderr')
          .map((e) => (
            <span
              key={e.seq}
              className={e.type}
              style={{ color: e.type === 'stderr' ? '#ff7b72' : '#e6edf3' }}
            >
              {String(e.data.text)}
            </span>
          ))}
      </pre>
    </div>
  );
}

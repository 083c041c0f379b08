'use client';

import { useEffect, useState } from 'react';

function format(ms: number): string {
  if (ms <= 0) return 'expired';
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mmss = `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  return h > 0 ? `${h}:${mmss}` : mmss;
}

/** TtlCountdown shows the time left until `expiresAt`, ticking every second. */
export function TtlCountdown({ expiresAt }: { expiresAt: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  // The first render (server) prints the absolute time; the client switches to the countdown.
  if (now === null) return <time dateTime={expiresAt}>{expiresAt}</time>;
  const left = Date.parse(expiresAt) - now;
  return (
    <time dateTime={expiresAt} className={left < 60_000 ? 'error' : undefined} data-ttl>
      {format(left)}
    </time>
  );
}

'use client';

import { useState } from 'react';

/** ScreenshotPanel shows a fresh screenshot on demand (the PNG comes through our server, with the key). */
export function ScreenshotPanel({ claimId }: { claimId: string }) {
  const [stamp, setStamp] = useState(() => Date.now());
  const [state, setState] = useState<'loading' | 'loaded' | 'failed'>('loading');
  return (
    <div>
      <p>
        <button
          type="button"
          onClick={() => {
            setState('loading');
            setStamp(Date.now());
          }}
        >
          Take screenshot
        </button>{' '}
        {state === 'loading' ? <span className="muted">Loading…</span> : null}
        {state === 'failed' ? <span className="error">The screenshot failed.</span> : null}
      </p>
      <img
        className="screenshot"
        src={`/claims/${claimId}/screenshot?t=${stamp}`}
        alt="Screenshot of the desktop"
        onLoad={() => setState('loaded')}
        onError={() => setState('failed')}
        hidden={state === 'failed'}
      />
    </div>
  );
}

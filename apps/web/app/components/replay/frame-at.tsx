'use client';

import { useEffect, useRef, useState } from 'react';

/**
 * FrameAt draws the video's frame at one media time into a canvas (a step's before or after
 * frame when no screenshot was kept): a second, hidden <video> seeks there, so the main player
 * keeps its place. A time past the end shows the last frame.
 */
export function FrameAt({ src, seconds, label }: { src: string; seconds: number; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [state, setState] = useState<'loading' | 'drawn' | 'failed'>('loading');

  useEffect(() => {
    const v = document.createElement('video');
    v.muted = true;
    v.preload = 'auto';
    v.src = src;
    setState('loading');
    const draw = () => {
      const c = canvas.current;
      if (!c || !v.videoWidth) return;
      c.width = v.videoWidth;
      c.height = v.videoHeight;
      c.getContext('2d')?.drawImage(v, 0, 0);
      setState('drawn');
    };
    v.addEventListener('loadedmetadata', () => {
      const end = Number.isFinite(v.duration) ? v.duration : seconds;
      v.currentTime = Math.min(seconds, Math.max(0, end - 0.05));
    });
    v.addEventListener('seeked', draw);
    v.addEventListener('error', () => setState('failed'));
    return () => {
      v.removeAttribute('src');
      v.load();
    };
  }, [src, seconds]);

  return (
    <>
      <canvas ref={canvas} data-frame={label} data-state={state} aria-label={`${label} frame`} />
      {state === 'failed' ? <p className="muted">Frame not available.</p> : null}
    </>
  );
}

'use client';

import type { RecordingGap, TimelineEntry } from '@cubicle/contract/api';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { FrameAt } from './frame-at';
import styles from './replay.module.css';
import { clock, currentIndex, gapAt, gapText, stepTitle, videoSecondsOf } from './step-text';

export interface ReplayPlayerProps {
  /** The video (through this web app, which holds the credential); null: the claim was not recorded. */
  mediaUrl: string | null;
  /** The recording's media time 0 (`started_at`); entries are placed relative to it. */
  startedAt: string | null;
  entries: TimelineEntry[];
  /** The video's spans without frames (ms on its axis): there the picture is held, not live. */
  gaps: RecordingGap[];
  /** Where this page re-reads the timeline while the claim is live (JSON `{entries}`). */
  timelineUrl: string;
  isLive: boolean;
  /** Kept screenshots of the claim (dashboard only): `<base><screenshot_id>`. */
  screenshotBase?: string;
}

/** How often a live replay re-reads its timeline (the recording grows by segments of a few s). */
const LIVE_REFRESH_MS = 5_000;

/**
 * ReplayPlayer is the replay page's body: a real <video> of the claim's screen beside its
 * timeline. A click on a step seeks the video to it; playing or scrubbing highlights the step
 * the video is at. The selected step shows its effect and evidence, and its before and after
 * frames (the kept screenshot it was measured in, else the video's frames around it).
 */
export function ReplayPlayer(props: ReplayPlayerProps) {
  const { mediaUrl, startedAt, timelineUrl, isLive, screenshotBase } = props;
  const video = useRef<HTMLVideoElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const [entries, setEntries] = useState(props.entries);
  const [gaps, setGaps] = useState(props.gaps);
  const [time, setTime] = useState(0);
  const [current, setCurrent] = useState(-1);
  const [selected, setSelected] = useState<string | null>(null);
  const [mediaNonce, setMediaNonce] = useState(0);
  const origin = startedAt ?? entries[0]?.at ?? new Date(0).toISOString();
  const seconds = useMemo(() => entries.map((e) => videoSecondsOf(e, origin)), [entries, origin]);
  const src = mediaUrl ? `${mediaUrl}${mediaNonce ? `?v=${mediaNonce}` : ''}` : null;

  // The first decoded frame, from the navigation's start: what the recording bench reads.
  useEffect(() => {
    const v = video.current;
    if (!v) return;
    const mark = () => {
      const root = document.documentElement;
      if (!root.dataset.replayFirstFrameMs)
        root.dataset.replayFirstFrameMs = String(performance.now());
    };
    if (v.readyState >= 2) mark();
    v.addEventListener('loadeddata', mark, { once: true });
    v.requestVideoFrameCallback?.(mark);
    return () => v.removeEventListener('loadeddata', mark);
  }, [src]);

  const onTime = useCallback(() => {
    const v = video.current;
    if (!v) return;
    setCurrent(currentIndex(seconds, v.currentTime));
    setTime(v.currentTime);
  }, [seconds]);

  // Keep the highlighted step in view as the video plays.
  useEffect(() => {
    if (current < 0) return;
    list.current
      ?.querySelector(`[data-index="${current}"]`)
      ?.scrollIntoView?.({ block: 'nearest' });
  }, [current]);

  // A live claim's timeline grows: re-read it; the video is re-read on demand (Load latest).
  useEffect(() => {
    if (!isLive) return;
    const timer = setInterval(() => {
      void fetch(timelineUrl, { cache: 'no-store' })
        .then((r) => (r.ok ? r.json() : null))
        .then((body: { entries?: TimelineEntry[]; gaps?: RecordingGap[] } | null) => {
          if (body?.entries) setEntries(body.entries);
          if (body?.gaps) setGaps(body.gaps);
        })
        .catch(() => undefined);
    }, LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [isLive, timelineUrl]);

  const seek = (index: number) => {
    const entry = entries[index]!;
    setSelected(entry.key);
    setCurrent(index);
    const v = video.current;
    if (v) v.currentTime = seconds[index]!;
  };

  const reloadVideo = () => {
    const at = video.current?.currentTime ?? 0;
    setMediaNonce(Date.now());
    requestAnimationFrame(() => {
      const v = video.current;
      if (v) v.addEventListener('loadedmetadata', () => (v.currentTime = at), { once: true });
    });
  };

  const chosen = entries.find((e) => e.key === selected) ?? null;
  const inGap = src ? gapAt(gaps, time) : null;
  return (
    <div className={styles.replay} data-testid="replay">
      <section>
        {src ? (
          <video
            ref={video}
            className={styles.video}
            src={src}
            controls
            muted
            playsInline
            preload="auto"
            data-testid="replay-video"
            onTimeUpdate={onTime}
            onSeeked={onTime}
          />
        ) : (
          <p className="muted" data-testid="replay-no-video">
            This claim was not recorded: the timeline is all there is.
          </p>
        )}
        {inGap ? (
          <p className="alert" data-testid="replay-gap-now">
            No frames here ({gapText(inGap)}): the picture is held from before, not the live screen.
          </p>
        ) : null}
        {src && gaps.length > 0 ? (
          <p className="muted" data-testid="replay-gaps">
            Without frames:{' '}
            {gaps.map((g, i) => (
              <button
                key={i}
                type="button"
                className={styles.gap}
                data-start-ms={g.start_ms}
                data-end-ms={g.end_ms}
                data-reason={g.reason}
                onClick={() => {
                  if (video.current) video.current.currentTime = g.start_ms / 1000;
                }}
              >
                {clock(g.start_ms / 1000)}–{clock(g.end_ms / 1000)}
              </button>
            ))}
          </p>
        ) : null}
        {isLive && src ? (
          <p className="row" style={{ alignItems: 'center' }}>
            <span className="badge active">recording</span>
            <button type="button" onClick={reloadVideo}>
              Load latest
            </button>
          </p>
        ) : null}
        {chosen ? (
          <StepDetail
            entry={chosen}
            seconds={src ? seconds[entries.indexOf(chosen)]! : null}
            src={src}
            screenshotBase={screenshotBase}
          />
        ) : (
          <p className="muted">Click a step to see the video there, its effect and its evidence.</p>
        )}
      </section>
      <ol className={styles.steps} ref={list} data-testid="replay-steps">
        {entries.map((e, i) => (
          <li key={e.key}>
            <button
              type="button"
              className={`${styles.step} ${i === current ? styles.current : ''} ${e.key === selected ? styles.selected : ''}`}
              data-index={i}
              data-kind={e.kind}
              data-key={e.key}
              data-seconds={seconds[i]!.toFixed(3)}
              data-current={i === current ? 'true' : undefined}
              onClick={() => seek(i)}
            >
              <span className={styles.time}>{clock(seconds[i]!)}</span>
              {e.kind === 'action' ? (
                <span
                  className={`badge ${e.effect === 'confirmed' ? 'success' : e.effect === 'refused' ? 'failure' : ''}`}
                >
                  {e.effect}
                </span>
              ) : null}{' '}
              {stepTitle(e)}
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}

function StepDetail({
  entry,
  seconds,
  src,
  screenshotBase,
}: {
  entry: TimelineEntry;
  seconds: number | null;
  src: string | null;
  screenshotBase: string | undefined;
}) {
  return (
    <div className={`card ${styles.detail}`} data-testid="step-detail" data-key={entry.key}>
      <h3 style={{ marginTop: 0 }}>
        {stepTitle(entry)} <span className="muted">{entry.at.slice(11, 23)}</span>
      </h3>
      {entry.kind === 'action' ? (
        <>
          <p>
            Effect <span className="badge">{entry.effect}</span>
            {entry.error_code ? <span className="muted"> {entry.error_code}</span> : null}
            <span className="muted">
              {' '}
              · {entry.duration_ms} ms · {entry.operation}
            </span>
          </p>
          {entry.summary ? <p>{entry.summary}</p> : null}
          {entry.evidence.length > 0 ? (
            <ul data-testid="step-evidence">
              {entry.evidence.map((line, i) => (
                <li key={i}>{line}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">No evidence.</p>
          )}
          <div className={styles.frames}>
            <figure>
              <figcaption className="muted">Before</figcaption>
              {entry.before_screenshot_id && screenshotBase ? (
                <img src={`${screenshotBase}${entry.before_screenshot_id}`} alt="before the step" />
              ) : src && seconds !== null ? (
                <FrameAt src={src} seconds={Math.max(0, seconds - 0.2)} label="before" />
              ) : (
                <p className="muted">No frame.</p>
              )}
            </figure>
            {src && seconds !== null ? (
              <figure>
                <figcaption className="muted">After</figcaption>
                <FrameAt
                  src={src}
                  seconds={seconds + entry.duration_ms / 1000 + 0.5}
                  label="after"
                />
              </figure>
            ) : null}
          </div>
        </>
      ) : entry.kind === 'run_output' ? (
        <pre className={styles.output}>{entry.text}</pre>
      ) : null}
    </div>
  );
}

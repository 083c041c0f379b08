import type {
  ActionRecord,
  Claim,
  Run,
  ViewerConnection,
  ViewerTicket,
} from '@cubicle/contract/api';
import '../../../components/charts/charts.css';
import { Thumbnail } from './thumbnail';

/** One moment of a claim's life, as the timeline lists it. */
interface TimelineEntry {
  at: string;
  kind: 'claim' | 'action' | 'ticket' | 'viewer' | 'run' | 'release';
  title: string;
  detail?: string;
  /** The screenshot the action was aimed at (pixel actions quote one). */
  screenshotId?: string;
}

/**
 * timelineOf merges what the API reports about a claim into one ordered list: created,
 * activated (its desktop claimed), every stored action with its effect (and the screenshot it
 * was measured in), viewer tickets minted, viewers connected and disconnected, runs started and
 * finished, and the release with its reason. Pure: the page fetches, this orders.
 */
export function timelineOf(
  claim: Claim,
  actions: ActionRecord[],
  tickets: ViewerTicket[],
  runs: Run[],
  viewers: ViewerConnection[] = [],
): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    { at: claim.created_at, kind: 'claim', title: 'Claim created' },
  ];
  if (claim.sandbox?.claimed_at)
    entries.push({
      at: claim.sandbox.claimed_at,
      kind: 'claim',
      title: 'Desktop claimed',
      detail: claim.sandbox.id,
    });
  for (const a of actions)
    entries.push({
      at: a.created_at,
      kind: 'action',
      title: `${a.operation} → ${a.effect}`,
      detail: [
        `${a.duration_ms} ms`,
        a.result.screenshot_id ? `screenshot ${a.result.screenshot_id}` : null,
        a.result.effect === 'refused' ? a.result.error.code : null,
      ]
        .filter(Boolean)
        .join(' · '),
      ...(a.result.screenshot_id ? { screenshotId: a.result.screenshot_id } : {}),
    });
  for (const t of tickets)
    entries.push({ at: t.created_at, kind: 'ticket', title: `Viewer ticket minted (${t.mode})` });
  for (const v of viewers) {
    entries.push({ at: v.connected_at, kind: 'viewer', title: `Viewer connected (${v.mode})` });
    if (v.disconnected_at)
      entries.push({
        at: v.disconnected_at,
        kind: 'viewer',
        title: 'Viewer disconnected',
        detail: v.close_reason ?? undefined,
      });
  }
  for (const r of runs) {
    const argv = r.argv.join(' ').slice(0, 80);
    if (r.started_at)
      entries.push({ at: r.started_at, kind: 'run', title: 'Run started', detail: argv });
    if (r.finished_at)
      entries.push({
        at: r.finished_at,
        kind: 'run',
        title: `Run ${r.status}`,
        detail: r.exit_code === null ? argv : `exit code ${r.exit_code} · ${argv}`,
      });
  }
  if (claim.released_at)
    entries.push({
      at: claim.released_at,
      kind: 'release',
      title: 'Released',
      detail: claim.release_reason ?? undefined,
    });
  return entries.sort((a, b) => a.at.localeCompare(b.at));
}

/** ClaimTimeline renders timelineOf as an ordered list (times in UTC). */
export function ClaimTimeline(props: {
  claim: Claim;
  actions: ActionRecord[];
  tickets: ViewerTicket[];
  runs: Run[];
  viewers: ViewerConnection[];
}) {
  const entries = timelineOf(props.claim, props.actions, props.tickets, props.runs, props.viewers);
  return (
    <ol className="timeline" aria-label="Claim timeline" data-testid="claim-timeline">
      {entries.map((e, i) => (
        <li key={`${e.at}-${i}`} data-kind={e.kind}>
          <time dateTime={e.at} className="mono">
            {e.at.slice(11, 19)}
          </time>{' '}
          <strong>{e.title}</strong>
          {e.detail ? <span className="muted"> {e.detail}</span> : null}
          {e.screenshotId ? (
            <Thumbnail claimId={props.claim.id} screenshotId={e.screenshotId} />
          ) : null}
        </li>
      ))}
    </ol>
  );
}

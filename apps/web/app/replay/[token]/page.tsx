import type { Metadata } from 'next';
import {
  introspectReplayLink,
  readRecording,
  readTimeline,
  type ReplayLinkInfo,
} from '../../../lib/api/replay';
import { ReplayPlayer } from '../../components/replay/replay-player';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Cubicle replay', robots: 'noindex' };

const MESSAGES = {
  expired: { title: 'Replay link expired', text: 'This link has expired. Ask for a new one.' },
  revoked: { title: 'Replay link revoked', text: 'This link was revoked by its owner.' },
  invalid: { title: 'Invalid link', text: 'This replay link is not valid.' },
  unavailable: { title: 'Unavailable', text: 'The replay cannot be reached right now.' },
} as const;

/**
 * The shared replay: what a replay link shows without a dashboard session — the claim's video
 * beside its timeline, read-only, or a plain message once the link is no longer valid. The
 * token stays on the server side of this app: the page's media and timeline go through
 * /replay/{token}/… routes that call the API with it.
 */
export default async function SharedReplayPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  let info: ReplayLinkInfo | { state: 'unavailable' };
  try {
    info = await introspectReplayLink(token);
  } catch {
    info = { state: 'unavailable' };
  }
  if (info.state !== 'active') {
    const message = MESSAGES[info.state];
    return (
      <main className="embed" data-state={info.state}>
        <div className="embed-message" role="status">
          <h1>{message.title}</h1>
          <p>{message.text}</p>
        </div>
      </main>
    );
  }
  const auth = { bearer: token };
  const [recording, timeline] = await Promise.all([
    readRecording(auth, info.claim_id),
    readTimeline(auth, info.claim_id),
  ]);
  const base = `/replay/${encodeURIComponent(token)}`;
  return (
    <main className="content" data-state="active" style={{ maxWidth: 'none' }}>
      <h1 style={{ fontSize: '1.1rem' }}>
        Replay <span className="muted mono">{info.claim_id}</span>
      </h1>
      <ReplayPlayer
        mediaUrl={recording?.started_at ? `${base}/media` : null}
        startedAt={recording?.started_at ?? null}
        entries={timeline.entries}
        gaps={timeline.gaps}
        timelineUrl={`${base}/timeline`}
        isLive={timeline.isLive}
      />
    </main>
  );
}

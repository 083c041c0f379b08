import { listOf, ReplayLink } from '@cubicle/contract/api';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ApiError, api } from '../../../../../lib/api/client';
import { readRecording, readTimeline, ReplayApiError } from '../../../../../lib/api/replay';
import { getEnv } from '../../../../../lib/env';
import { requireSession } from '../../../../../lib/session/current';
import { ReplayPlayer } from '../../../../components/replay/replay-player';
import { TtlCountdown } from '../../../../components/ttl-countdown';
import { revokeShareLink } from './share-actions';
import { ShareForm } from './share-form';

export const metadata = { title: 'Replay · Cubicle' };
export const dynamic = 'force-dynamic';

const ReplayLinkList = listOf(ReplayLink);

async function readLinks(apiKey: string, claimId: string): Promise<ReplayLink[]> {
  const res = await fetch(
    new URL(`/v1/claims/${claimId}/replay-links?limit=50`, getEnv().CUBICLE_API_URL),
    { headers: { authorization: `Bearer ${apiKey}` }, cache: 'no-store' },
  );
  return res.ok ? ReplayLinkList.parse(await res.json()).data : [];
}

/**
 * The replay page of a claim: its video beside its timeline, for a live claim (the recording so
 * far) and an ended one; and the claim's share links.
 */
export default async function ReplayPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await requireSession();
  const claim = await api(session, (c) => c.claims.get(id)).then(
    (handle) => handle.data,
    (error: unknown) => {
      if (error instanceof ApiError && (error.status === 404 || error.status === 400)) notFound();
      throw error;
    },
  );
  const auth = { bearer: session.apiKey };
  const [recording, timeline, links] = await Promise.all([
    readRecording(auth, id),
    readTimeline(auth, id).catch((error: unknown) => {
      if (error instanceof ReplayApiError) return null;
      throw error;
    }),
    readLinks(session.apiKey, id),
  ]);
  const hasVideo = Boolean(recording?.started_at);
  return (
    <>
      <h1>
        Replay · {claim.name} <span className={`badge ${claim.status}`}>{claim.status}</span>
      </h1>
      <p className="muted">
        <Link href={`/claims/${id}`}>Back to the claim</Link>
        {recording
          ? ` · ${recording.state} · ${(recording.duration_ms / 1000).toFixed(1)} s · ${recording.fps} fps`
          : ' · not recorded'}
      </p>
      {timeline ? (
        <ReplayPlayer
          mediaUrl={hasVideo ? `/claims/${id}/replay/media` : null}
          startedAt={recording?.started_at ?? null}
          entries={timeline.entries}
          gaps={timeline.gaps}
          timelineUrl={`/claims/${id}/replay/timeline`}
          isLive={timeline.isLive}
          screenshotBase={`/claims/${id}/screenshots/`}
        />
      ) : (
        <p className="alert">The timeline could not be loaded.</p>
      )}
      {timeline?.isCut ? (
        <p className="muted">The timeline is long: its first 10 000 entries are shown.</p>
      ) : null}

      <h2>Share</h2>
      <p className="muted">
        A share link opens this replay without signing in (read-only), until it expires or is
        revoked; it may be framed by your tenant&apos;s allowed embed origins.
      </p>
      <ShareForm claimId={id} />
      {links.length > 0 ? (
        <table data-testid="share-links">
          <thead>
            <tr>
              <th>Link</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {links.map((l) => (
              <tr key={l.id}>
                <td className="mono">{l.id}</td>
                <td>
                  {l.revoked_at ? (
                    <span className="badge failure">revoked</span>
                  ) : (
                    <TtlCountdown expiresAt={l.expires_at} />
                  )}
                </td>
                <td>
                  {l.revoked_at ? null : (
                    <form action={revokeShareLink}>
                      <input type="hidden" name="claim" value={id} />
                      <input type="hidden" name="link" value={l.id} />
                      <button type="submit" className="danger">
                        Revoke
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

// No 'server-only' marker: proxy.ts (outside the React server layer) introspects links too.
import {
  ClaimTimeline,
  Recording,
  ReplayLinkIntrospection,
  Routes,
  ViewerTicketString,
  type RecordingGap,
  type RouteDef,
  type TimelineEntry,
} from '@cubicle/contract/api';
import { getEnv } from '../env';

/*
 * The replay pages read a claim's recording, media and timeline with one bearer: the session's
 * API key on the dashboard, a replay link's token on the share page. The SDK's route table is
 * generated later; these few calls go through the contract's route definitions directly, so the
 * paths and the answers' schemas are still the contract's.
 */

/** ReplayAuth is the one credential a replay page reads with; it never reaches the browser. */
export type ReplayAuth = { bearer: string };

/** The API refused the credential (401) or the thing is not there (404), or failed otherwise. */
export class ReplayApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(`replay API call failed: ${status} ${code}`);
  }
}

function urlOf(def: RouteDef, claimId: string, query?: Record<string, string>): string {
  const path = def.path.replace('{id}', encodeURIComponent(claimId));
  const url = new URL(path, getEnv().CUBICLE_API_URL);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
  return url.toString();
}

async function getJson(auth: ReplayAuth, url: string): Promise<unknown> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${auth.bearer}` },
    cache: 'no-store',
  });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
    throw new ReplayApiError(res.status, body?.error?.code ?? 'unknown');
  }
  return res.json();
}

/** TIMELINE_PAGE_LIMIT entries a page; a replay page reads at most MAX_PAGES of them. */
const TIMELINE_PAGE_LIMIT = 1000;
const MAX_PAGES = 10;

/**
 * readTimeline reads a claim's timeline from `after` on (all of it, up to 10 000 entries: a
 * replay page lists it whole), oldest first.
 */
export async function readTimeline(
  auth: ReplayAuth,
  claimId: string,
): Promise<{
  origin: string;
  isLive: boolean;
  entries: TimelineEntry[];
  gaps: RecordingGap[];
  isCut: boolean;
}> {
  const entries: TimelineEntry[] = [];
  let cursor: string | null = null;
  let first: ClaimTimeline | null = null;
  let last: ClaimTimeline | null = null;
  for (let i = 0; i < MAX_PAGES; i++) {
    const query: Record<string, string> = { limit: String(TIMELINE_PAGE_LIMIT) };
    if (cursor) query.cursor = cursor;
    const page = ClaimTimeline.parse(
      await getJson(auth, urlOf(Routes.getClaimTimeline, claimId, query)),
    );
    first ??= page;
    last = page;
    entries.push(...page.data);
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  return {
    origin: first!.origin,
    isLive: first!.is_live,
    entries,
    // Every page carries all gaps: the last page read has the newest.
    gaps: last!.gaps,
    isCut: cursor !== null,
  };
}

/** readRecording is the claim's recording, or null when it was not recorded (404). */
export async function readRecording(auth: ReplayAuth, claimId: string): Promise<Recording | null> {
  try {
    return Recording.parse(await getJson(auth, urlOf(Routes.getClaimRecording, claimId)));
  } catch (error) {
    if (error instanceof ReplayApiError && error.status === 404) return null;
    throw error;
  }
}

/** Response headers of the media stream a player needs; the rest stay behind. */
const MEDIA_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges'];

/**
 * proxyMedia forwards a player's (range) request for the claim's video to the API with the
 * page's credential, and streams the answer back: the browser never holds the key or token.
 */
export async function proxyMedia(
  auth: ReplayAuth,
  claimId: string,
  request: Request,
): Promise<Response> {
  const range = request.headers.get('range');
  const upstream = await fetch(urlOf(Routes.getClaimRecordingMedia, claimId), {
    headers: { authorization: `Bearer ${auth.bearer}`, ...(range ? { range } : {}) },
    cache: 'no-store',
  });
  const headers = new Headers({ 'cache-control': 'private, no-cache' });
  for (const name of MEDIA_HEADERS) {
    const value = upstream.headers.get(name);
    if (value) headers.set(name, value);
  }
  if (!upstream.ok)
    return new Response(`media not available (${upstream.status})`, { status: upstream.status });
  return new Response(upstream.body, { status: upstream.status, headers });
}

export type ReplayLinkInfo = ReplayLinkIntrospection | { state: 'invalid' };

/** introspectReplayLink asks the API (no key: the token is the credential) what a link allows now. */
export async function introspectReplayLink(token: string): Promise<ReplayLinkInfo> {
  // Not even shaped like a signed token: not worth a round trip.
  if (!ViewerTicketString.safeParse(token).success) return { state: 'invalid' };
  const res = await fetch(new URL(Routes.introspectReplayLink.path, getEnv().CUBICLE_API_URL), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
    cache: 'no-store',
  });
  if (res.status === 401 || res.status === 400) return { state: 'invalid' };
  if (!res.ok) throw new ReplayApiError(res.status, 'introspect_failed');
  return ReplayLinkIntrospection.parse(await res.json());
}

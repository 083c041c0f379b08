import type { ClaimTimeline, TimelineEntry, TimelineQuery } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { allGaps } from '../recordings/recording-gaps.js';
import { RECORDING_DELETED } from '../recordings/recording-kept.js';
import type { Resources } from '../resources.js';
import { claimRedactor } from '../secrets/claim-redactor.js';
import {
  actionEntry,
  cutText,
  decodeCursor,
  pageOf,
  placed,
  type TimelineCursor,
} from './timeline-entries.js';

export type TimelineDeps = Pick<Resources, 'db' | 'keyring'>;

/**
 * Audit actions that are timeline entries: the API audits every mutating call, so a window launch
 * (`launchClaimWindow`) is there with its outcome and time.
 */
const AUDITED = ['claim_window.launch'];

/** Rows of a source with many rows per claim are read from the cursor on, this many past a page. */
const MARGIN = 50;

export interface TimelineInput {
  tenantId: string;
  claimId: string;
  query: TimelineQuery;
  /** The video's first instant (the recording's start), when the claim records. */
  origin?: Date | undefined;
}

/**
 * getClaimTimeline answers one page of a claim's timeline, oldest first, every source on the one
 * wall clock of the API's rows. The page is redacted against the claim's secrets on top of what
 * each source already redacted when it was stored (run output, action requests and results), so a
 * value never reaches a viewer even from a row written before a secret was added. Another
 * tenant's claim, and a recorded claim whose recording retention deleted, are 404.
 */
export async function getClaimTimeline(
  deps: TimelineDeps,
  input: TimelineInput,
): Promise<ClaimTimeline> {
  const { tenantId, claimId, query } = input;
  const after = query.cursor ? decodeCursor(query.cursor) : null;
  if (query.cursor && !after)
    throw new AppError('validation_failed', 'cursor: must be a next_cursor from this list');
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: {
      status: true,
      createdAt: true,
      activatedAt: true,
      releasedAt: true,
      releaseReason: true,
    },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
  // The video's time 0 is its first frame: entries are placed on that axis when there is one.
  const recording = await deps.db.recording.findFirst({
    where: { claimId, tenantId },
    select: { startedAt: true, state: true },
  });
  // A recorded claim's timeline goes with its recording at retention (the marker it leaves).
  if (recording?.state === RECORDING_DELETED)
    throw new AppError('not_found', `claim ${claimId}'s recording and timeline were deleted`);
  const origin = input.origin ?? recording?.startedAt ?? claim.activatedAt ?? claim.createdAt;
  const entries = await readEntries(deps, input, claim, origin, after);
  const page = pageOf(entries, after, query.limit);
  await dropUnkeptScreenshots(deps, tenantId, claimId, page.data);
  const redactor = await claimRedactor(deps, tenantId, claimId);
  // The video's spans without frames, on the same axis (only segments that have any are read).
  const gaps = recording
    ? allGaps(
        await deps.db.recordingSegment.findMany({
          where: { claimId, NOT: { gaps: { equals: [] } } },
          orderBy: { seq: 'asc' },
          select: { gaps: true },
        }),
      )
    : [];
  return {
    claim_id: claimId,
    origin: origin.toISOString(),
    is_live: claim.status !== 'released',
    data: redactor.hasSecrets ? redactor.redactDeep(page.data) : page.data,
    gaps,
    next_cursor: page.next_cursor,
  };
}

/**
 * dropUnkeptScreenshots nulls an action's before frame when the claim kept no such screenshot
 * (claims holding secrets keep none; pruning drops old ones), so a page never links a 404.
 */
async function dropUnkeptScreenshots(
  deps: TimelineDeps,
  tenantId: string,
  claimId: string,
  entries: TimelineEntry[],
): Promise<void> {
  const ids = [
    ...new Set(
      entries.flatMap((e) =>
        e.kind === 'action' && e.before_screenshot_id ? [e.before_screenshot_id] : [],
      ),
    ),
  ];
  if (ids.length === 0) return;
  const kept = await deps.db.claimScreenshot.findMany({
    where: { claimId, tenantId, screenshotId: { in: ids } },
    select: { screenshotId: true },
  });
  const isKept = new Set(kept.map((k) => k.screenshotId));
  for (const e of entries)
    if (e.kind === 'action' && e.before_screenshot_id && !isKept.has(e.before_screenshot_id))
      e.before_screenshot_id = null;
}

interface ClaimTimes {
  createdAt: Date;
  activatedAt: Date | null;
  releasedAt: Date | null;
  releaseReason: string | null;
}

async function readEntries(
  deps: TimelineDeps,
  { tenantId, claimId, query }: TimelineInput,
  claim: ClaimTimes,
  origin: Date,
  after: TimelineCursor | null,
): Promise<TimelineEntry[]> {
  const db = deps.db;
  const since = after ? { gte: new Date(after.at) } : undefined;
  const take = query.limit + MARGIN;
  const [actions, runs, output, viewers, handoffs, denials, audits, pauses] = await Promise.all([
    db.actionRecord.findMany({
      where: { claimId, tenantId, ...(since ? { createdAt: since } : {}) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take,
      select: {
        id: true,
        operation: true,
        request: true,
        result: true,
        durationMs: true,
        createdAt: true,
      },
    }),
    // A claim has few runs, handoffs and viewer streams; each row may give two entries.
    db.run.findMany({
      where: { claimId, tenantId },
      orderBy: { createdAt: 'asc' },
      take: 1000,
      select: {
        id: true,
        argv: true,
        status: true,
        exitCode: true,
        endReason: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
      },
    }),
    db.runEvent.findMany({
      where: {
        tenantId,
        run: { claimId },
        type: { in: ['stdout', 'stderr'] },
        ...(since ? { createdAt: since } : {}),
      },
      orderBy: [{ createdAt: 'asc' }, { seq: 'asc' }],
      take,
      select: { runId: true, seq: true, type: true, data: true, createdAt: true },
    }),
    db.viewerConnection.findMany({
      where: { claimId, tenantId },
      orderBy: { connectedAt: 'asc' },
      take: 2000,
    }),
    db.handoff.findMany({
      where: { claimId, tenantId },
      orderBy: { createdAt: 'asc' },
      take: 1000,
    }),
    db.egressEvent.findMany({
      where: { claimId, tenantId, verdict: 'denied', ...(since ? { firstAt: since } : {}) },
      orderBy: [{ firstAt: 'asc' }, { id: 'asc' }],
      take,
    }),
    db.auditEvent.findMany({
      where: {
        tenantId,
        targetId: claimId,
        action: { in: AUDITED },
        ...(since ? { createdAt: since } : {}),
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take,
      select: { id: true, action: true, result: true, createdAt: true },
    }),
    // Pauses, asked for or automatic (the claim's idle window), each with its resume.
    db.claimPause.findMany({
      where: { claimId, tenantId },
      orderBy: { startedAt: 'asc' },
      take: 1000,
      select: { id: true, reason: true, startedAt: true, endedAt: true },
    }),
  ]);

  const out: TimelineEntry[] = [];
  const push = (e: TimelineEntry) => out.push(e);

  push({
    kind: 'claim',
    ...placed('claim', '0-claimed', claim.createdAt, origin),
    event: 'claimed',
    reason: null,
  });
  if (claim.activatedAt)
    push({
      kind: 'claim',
      ...placed('claim', '1-activated', claim.activatedAt, origin),
      event: 'activated',
      reason: null,
    });
  if (claim.releasedAt)
    push({
      kind: 'claim',
      ...placed('claim', '9-released', claim.releasedAt, origin),
      event: 'released',
      reason: claim.releaseReason,
    });

  for (const a of actions) push(actionEntry(a, origin));

  for (const r of runs) {
    push({
      kind: 'run_started',
      ...placed('run_started', r.id, r.startedAt ?? r.createdAt, origin),
      run_id: r.id,
      argv: r.argv,
    });
    if (r.finishedAt)
      push({
        kind: 'run_ended',
        ...placed('run_ended', r.id, r.finishedAt, origin),
        run_id: r.id,
        status: r.status,
        exit_code: r.exitCode,
        end_reason: r.endReason,
      });
  }

  for (const e of output) {
    const text = (e.data as { text?: unknown }).text;
    push({
      kind: 'run_output',
      ...placed('run_output', `${e.runId}:${String(e.seq).padStart(10, '0')}`, e.createdAt, origin),
      run_id: e.runId,
      stream: e.type === 'stderr' ? 'stderr' : 'stdout',
      ...cutText(typeof text === 'string' ? text : ''),
    });
  }

  for (const v of viewers) {
    const common = { ticket_id: v.ticketId, mode: v.mode } as const;
    push({
      kind: 'viewer',
      ...placed('viewer', `${v.id}:connected`, v.connectedAt, origin),
      event: 'connected',
      ...common,
      close_reason: null,
    });
    if (v.disconnectedAt)
      push({
        kind: 'viewer',
        ...placed('viewer', `${v.id}:disconnected`, v.disconnectedAt, origin),
        event: 'disconnected',
        ...common,
        close_reason: v.closeReason,
      });
  }

  for (const h of handoffs) {
    const common = { handoff_id: h.id, reason: h.reason.slice(0, 1000) };
    push({
      kind: 'handoff',
      ...placed('handoff', `${h.id}:requested`, h.createdAt, origin),
      event: 'requested',
      ...common,
      state: null,
    });
    if (h.takenAt)
      push({
        kind: 'handoff',
        ...placed('handoff', `${h.id}:taken`, h.takenAt, origin),
        event: 'taken',
        ...common,
        state: null,
      });
    if (h.endedAt)
      push({
        kind: 'handoff',
        ...placed('handoff', `${h.id}:ended`, h.endedAt, origin),
        event: 'ended',
        ...common,
        state: h.state,
      });
  }

  for (const d of denials)
    push({
      kind: 'egress_denied',
      ...placed('egress_denied', d.id, d.firstAt, origin),
      protocol: d.protocol,
      name: d.name,
      ip: d.ip,
      port: d.port,
      rule: d.rule,
      count: d.count,
    });

  for (const a of audits)
    push({
      kind: 'window',
      ...placed('window', a.id, a.createdAt, origin),
      event: a.result === 'success' ? 'launched' : 'launch_failed',
      app: null,
    });

  for (const p of pauses) {
    push({
      kind: 'claim',
      ...placed('claim', `${p.id}:paused`, p.startedAt, origin),
      event: 'paused',
      reason: p.reason,
    });
    if (p.endedAt)
      push({
        kind: 'claim',
        ...placed('claim', `${p.id}:resumed`, p.endedAt, origin),
        event: 'resumed',
        reason: null,
      });
  }
  return out;
}

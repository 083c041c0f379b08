import { TIMELINE_MAX_TEXT, type TimelineElement, type TimelineEntry } from '@cubicle/contract/api';
import type { ActionEvidence, ActionResult } from '@cubicle/contract/guest';

// Pure mappers from stored rows to timeline entries; claim-timeline.ts reads the rows.

/** Fields every entry has, from its instant and the timeline's origin. */
export function placed(kind: string, id: string, at: Date, origin: Date) {
  return { key: `${kind}:${id}`, at: at.toISOString(), offset_ms: at.getTime() - origin.getTime() };
}

const quote = (s: string, max = 120) => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);

/**
 * evidenceLine says one evidence item in a line a person reads beside the video. Values come from
 * the stored ActionResult, which the guest never fills with a secure field's value (it reads back
 * a length) and the API redacts against the claim's secrets before storing.
 */
export function evidenceLine(e: ActionEvidence): string {
  switch (e.kind) {
    case 'value_readback':
    case 'name_readback':
      return `${e.kind}: ${e.before === undefined ? '' : `${quote(e.before)} → `}${quote(e.after)}`;
    case 'length_readback':
      return `length_readback: ${e.before === undefined ? '' : `${e.before} → `}${e.after} characters`;
    case 'state_readback':
      return `state_readback: ${e.state} ${e.before === undefined ? '' : `${e.before} → `}${e.after}`;
    case 'a11y_event':
      return `a11y_event: ${e.event}${e.role ? ` on ${e.role}` : ''}${e.name ? ` ${quote(e.name)}` : ''} after ${e.after_ms} ms`;
    case 'window_change':
      return `window_change: ${e.change} window ${e.window_id}${e.title ? ` ${quote(e.title)}` : ''}`;
    case 'screenshot_diff':
      return `screenshot_diff: ${(e.changed_ratio * 100).toFixed(1)}% of the window changed`;
    case 'process_exit':
      return `process_exit: pid ${e.pid} exit ${e.exit_code ?? 'none'}${e.signal ? ` (${e.signal})` : ''}`;
    default:
      return (e satisfies never as { kind: string }).kind;
  }
}

/** elementOf finds the element an action aimed at: the first evidence that names a role or name. */
export function elementOf(result: ActionResult): TimelineElement | null {
  const evidence = 'evidence' in result ? (result.evidence ?? []) : [];
  for (const e of evidence)
    if (e.kind === 'a11y_event' && (e.role || e.name))
      return { role: e.role ?? null, name: e.name ?? null };
  return null;
}

/** The stored action row as claim-timeline.ts reads it. */
export interface ActionRow {
  id: string;
  operation: string;
  request: unknown;
  result: unknown;
  durationMs: number;
  createdAt: Date;
}

/** actionEntry places one stored ActionResult: its effect, evidence, element and before frame. */
export function actionEntry(row: ActionRow, origin: Date): TimelineEntry {
  const result = row.result as ActionResult;
  const request = (row.request ?? {}) as Record<string, unknown>;
  const action = typeof request.action === 'string' ? request.action : null;
  return {
    kind: 'action',
    ...placed('action', row.id, row.createdAt, origin),
    action_id: row.id,
    operation: row.operation,
    action,
    effect: result.effect,
    evidence: ('evidence' in result ? (result.evidence ?? []) : []).map(evidenceLine),
    summary: result.summary ?? null,
    element: elementOf(result),
    error_code: result.effect === 'refused' ? result.error.code : null,
    duration_ms: row.durationMs,
    before_screenshot_id: result.screenshot_id ?? null,
  };
}

/** cutText bounds one output line of a run in the timeline (the run's events keep all of it). */
export function cutText(text: string): { text: string; is_truncated: boolean } {
  return text.length > TIMELINE_MAX_TEXT
    ? { text: `${text.slice(0, TIMELINE_MAX_TEXT)}…`, is_truncated: true }
    : { text, is_truncated: false };
}

/** Sort key of an entry: its instant, then its key (ties broken the same way on every page). */
export const entryOrder = (a: TimelineEntry, b: TimelineEntry) =>
  a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** TimelineCursor is where a page ended: the last entry's instant and key. */
export interface TimelineCursor {
  at: string;
  key: string;
}

export const encodeCursor = (c: TimelineCursor) =>
  Buffer.from(JSON.stringify([c.at, c.key])).toString('base64url');

/** decodeCursor reads a next_cursor back; null for one this list never made. */
export function decodeCursor(cursor: string): TimelineCursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      !Number.isNaN(Date.parse(value[0]))
    )
      return { at: value[0], key: value[1] };
  } catch {
    // Not base64url JSON: not ours.
  }
  return null;
}

/**
 * pageOf merges the sources' entries into one page after the cursor: sorted by instant and key,
 * at most `limit`, with the cursor of the last one when more may follow.
 */
export function pageOf(
  entries: TimelineEntry[],
  after: TimelineCursor | null,
  limit: number,
): { data: TimelineEntry[]; next_cursor: string | null } {
  const sorted = entries
    .filter((e) => !after || e.at > after.at || (e.at === after.at && e.key > after.key))
    .sort(entryOrder);
  const data = sorted.slice(0, limit);
  const last = data.at(-1);
  return {
    data,
    next_cursor:
      sorted.length > limit && last ? encodeCursor({ at: last.at, key: last.key }) : null,
  };
}

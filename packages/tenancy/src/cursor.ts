import { AppError } from '@cubicle/contract/errors';

/**
 * Page cursors are opaque to callers: base64url of `<created_at ISO>|<id>`, the keyset of the
 * last row of a page. A cursor that does not decode is a 400, never an empty page.
 */
export interface Keyset {
  createdAt: Date;
  id: string;
}

export function encodeCursor(row: Keyset): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

export function decodeCursor(cursor: string, idPattern: RegExp): Keyset {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (rest.length > 0 || !id || !idPattern.test(id) || Number.isNaN(createdAt.getTime())) {
    throw new AppError('validation_failed', 'invalid cursor', {
      issues: [
        {
          location: 'query',
          path: 'cursor',
          code: 'invalid_cursor',
          message: 'not a cursor from this list',
        },
      ],
    });
  }
  return { createdAt, id };
}

/**
 * keysetBefore / keysetAfter are the Prisma filters for "rows after this cursor" in descending
 * or ascending (created_at, id) order; both use the (tenant_id, created_at) indexes.
 */
export function keysetBefore(k: Keyset) {
  return { OR: [{ createdAt: { lt: k.createdAt } }, { createdAt: k.createdAt, id: { lt: k.id } }] };
}
export function keysetAfter(k: Keyset) {
  return { OR: [{ createdAt: { gt: k.createdAt } }, { createdAt: k.createdAt, id: { gt: k.id } }] };
}

/** page splits one extra fetched row off to decide whether there is a next page. */
export function page<T extends Keyset, V>(rows: T[], limit: number, view: (row: T) => V) {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept.at(-1);
  return { data: kept.map(view), next_cursor: more && last ? encodeCursor(last) : null };
}

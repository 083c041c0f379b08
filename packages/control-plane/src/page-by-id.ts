/**
 * pageById splits the one extra row a list fetched (`take: limit + 1`) off to decide whether
 * there is a next page; the cursor is the last kept row's id (ids are ULIDs: they sort by
 * creation, so `id < cursor` / `id > cursor` continues the list).
 */
export function pageById<T extends { id: string }, V>(
  rows: T[],
  limit: number,
  view: (row: T) => V,
): { data: V[]; next_cursor: string | null } {
  const kept = rows.slice(0, limit);
  return {
    data: kept.map(view),
    next_cursor: rows.length > limit ? (kept.at(-1)?.id ?? null) : null,
  };
}

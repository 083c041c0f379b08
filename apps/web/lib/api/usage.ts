import 'server-only';
import type { PoolInsights, Usage } from '@cubicle/contract/api';
import type { SessionData } from '../session/store';
import { api } from './client';

/** DAY_MS: the usage page's spans are whole UTC days. */
const DAY_MS = 86_400_000;

/** usageSpan is [from, to) covering the last `days` UTC days including today. */
export function usageSpan(days: number, now = new Date()): { from: string; to: string } {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return {
    from: new Date(today - (days - 1) * DAY_MS).toISOString(),
    to: new Date(today + DAY_MS).toISOString(),
  };
}

/** tenantUsage is the signed-in tenant's usage per pool and UTC day (admin keys only). */
export function tenantUsage(
  session: SessionData,
  span: { from: string; to: string },
): Promise<Usage> {
  return api(session, (c) => c.usage.get({ ...span, group_by: 'day' }));
}

/** poolInsights is one pool's recent counts, waits, releases, failures and sizing hints. */
export function poolInsights(
  session: SessionData,
  pool: string,
  window: 'hour' | 'day',
): Promise<PoolInsights> {
  return api(session, (c) => c.usage.poolInsights(pool, { window }));
}

import type { Run, RunListQuery } from '@cubicle/contract/api';
import { sqlOf, type Db } from '@cubicle/db';
import { pageById } from '../page-by-id.js';
import { selectTenantRuns } from '../repositories/runs.js';
import { runView } from './run-view.js';

/**
 * listRuns pages the tenant's runs across all its claims, newest first (run ids are ULIDs: id
 * order is creation order, and the cursor is the last id shown); `status` keeps one state. It
 * serves the dashboard's runs page and clients that follow runs without knowing their claims.
 */
export async function listRuns(
  deps: { db: Db },
  tenantId: string,
  query: RunListQuery,
): Promise<{ data: Run[]; next_cursor: string | null }> {
  const rows = await sqlOf(deps.db).rows(
    selectTenantRuns,
    tenantId,
    query.cursor ?? null,
    query.status ?? null,
    query.limit + 1,
  );
  return pageById(rows, query.limit, runView);
}

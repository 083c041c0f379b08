import { ClaimPathParams } from '../claim.js';
import {
  ClaimScreenshotPathParams,
  ViewerConnectionList,
  ViewerConnectionQuery,
} from '../claim-history.js';
import { PoolPathParams } from '../pool.js';
import { binaryBody, defineRoute, type RouteDef } from '../route-def.js';
import { PoolInsights, PoolInsightsQuery, Usage, UsageQuery } from '../usage.js';
import { claimChild, readErrors } from './shared.js';

/** Usage metering (admin), pool insights and a claim's history for the dashboard. */
export const usageRoutes = {
  getUsage: defineRoute({
    operationId: 'getUsage',
    method: 'GET',
    path: '/v1/usage',
    tag: 'usage',
    auth: 'admin',
    summary: "The tenant's usage per pool, day or hour",
    description:
      'Claim, warm and run seconds from the hourly rollup (exact sums of recorded intervals). Hours starting in [from, to) count; `rolled_up_to` says how recent the rollup is.',
    query: UsageQuery,
    responses: { 200: Usage },
    errors: [...readErrors, 'forbidden'],
  }),
  getPoolInsights: defineRoute({
    operationId: 'getPoolInsights',
    method: 'GET',
    path: '/v1/pools/{name}/insights',
    tag: 'usage',
    auth: 'api_key',
    summary: "A pool's recent sandbox counts, claim waits, releases, failures and sizing hints",
    params: PoolPathParams,
    query: PoolInsightsQuery,
    responses: { 200: PoolInsights },
    errors: [...readErrors],
  }),
  listClaimViewerConnections: defineRoute({
    operationId: 'listClaimViewerConnections',
    method: 'GET',
    path: claimChild('viewer-connections'),
    tag: 'viewer',
    auth: 'api_key',
    summary: "The claim's viewer streams: when each connected and disconnected, oldest first",
    params: ClaimPathParams,
    query: ViewerConnectionQuery,
    responses: { 200: ViewerConnectionList },
    errors: [...readErrors],
  }),
  getClaimActionScreenshot: defineRoute({
    operationId: 'getClaimActionScreenshot',
    method: 'GET',
    path: claimChild('screenshots/{screenshot_id}'),
    tag: 'drive',
    auth: 'api_key',
    summary: 'A kept window screenshot of the claim (PNG), as quoted by a pixel action',
    description:
      "Window screenshots are kept for 7 days: the latest of each window, and every one a pixel action quoted (its ActionRecord's `result.screenshot_id`). Claims holding secrets keep none (pixels cannot be redacted); a screenshot not kept is 404.",
    params: ClaimScreenshotPathParams,
    responses: { 200: binaryBody('image/png') },
    errors: [...readErrors],
  }),
} satisfies Record<string, RouteDef>;

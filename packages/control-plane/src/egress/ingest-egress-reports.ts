import { newId, sqlOf } from '@cubicle/db';
import type { EgressDenialReport, EgressDenialSink } from '@cubicle/egress';
import { writeAuditEvent } from '@cubicle/tenancy';
import type { Resources } from '../resources.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';
import {
  addEgressEvents,
  collapseKey,
  selectSandboxHolders,
  type EgressEventInput,
  type EgressEventWritten,
} from '../repositories/egress-events.js';
import { publishEgressEvent } from './egress-event-feed.js';
import { egressEventView } from './list-egress-events.js';

type IngestDeps = Pick<Resources, 'db' | 'queues'> & Partial<Pick<Resources, 'now' | 'events'>>;

const MINUTE_MS = 60_000;

/** What one ingestion did, for the point's logs and metrics. */
export interface IngestResult {
  /** Lines written (new rows or counts added). */
  stored: number;
  /** New `egress.denied` events (a destination's first denial in its minute). */
  announced: number;
  /** Reports of sandboxes no claim holds (a warm desktop, an ended claim): counted, not kept. */
  unclaimed: number;
}

/**
 * ingestEgressDenials takes a batch from the egress point: reports are attributed to the claim
 * holding their sandbox and collapsed per claim, minute (of `firstAt`), verdict, destination and
 * rule, added to egress_events in one statement. Each destination's first denial in a minute is
 * an `egress.denied` event: a webhook (Standard Webhooks, through the outbox), an audit event
 * (system actor `egress`) and a line on the claim's live stream; later denials of that minute
 * only raise the count (also pushed to the live stream). Allowed reports only count.
 */
export async function ingestEgressDenials(
  deps: IngestDeps,
  batch: readonly EgressDenialReport[],
): Promise<IngestResult> {
  if (batch.length === 0) return { stored: 0, announced: 0, unclaimed: 0 };
  const sandboxIds = [...new Set(batch.map((r) => r.sandboxId))];
  const holders = new Map(
    (await sqlOf(deps.db).rows(selectSandboxHolders, sandboxIds)).map((h) => [h.sandbox_id, h]),
  );
  const lines = new Map<string, EgressEventInput>();
  let unclaimed = 0;
  for (const report of batch) {
    const holder = holders.get(report.sandboxId);
    if (!holder) {
      unclaimed += report.count;
      continue;
    }
    const line: EgressEventInput = {
      id: newId('egress_event'),
      tenantId: holder.tenant_id,
      claimId: holder.claim_id,
      poolId: holder.pool_id,
      sandboxId: report.sandboxId,
      verdict: report.verdict ?? 'denied',
      minute: new Date(Math.floor(report.firstAt.getTime() / MINUTE_MS) * MINUTE_MS),
      firstAt: report.firstAt,
      lastAt: report.lastAt,
      count: report.count,
      protocol: report.protocol,
      name: report.name ?? '',
      ip: report.ip ?? '',
      port: report.port ?? -1,
      rule: report.rule.slice(0, 500),
      process: report.process?.slice(0, 200) ?? null,
    };
    const key = collapseKey(line);
    const same = lines.get(key);
    if (same) {
      same.count += line.count;
      if (line.firstAt < same.firstAt) same.firstAt = line.firstAt;
      if (line.lastAt > same.lastAt) same.lastAt = line.lastAt;
      same.process ??= line.process;
    } else lines.set(key, line);
  }
  const inputs = new Map([...lines.values()].map((l) => [collapseKey(l), l]));
  const written = await addEgressEvents(deps.db, [...inputs.values()]);
  let announced = 0;
  await Promise.all(
    written.map(async (row) => {
      const input = inputs.get(collapseKey(row));
      if (!input || row.verdict !== 'denied') return;
      await publishEgressEvent(deps, egressEventView(storedOf(row, input)));
      if (!row.inserted) return;
      announced += 1;
      await announceDenial(deps, row, input);
    }),
  );
  return { stored: written.length, announced, unclaimed };
}

/** The stored row as the event page shows it (totals from the row, the rest from the input). */
function storedOf(row: EgressEventWritten, input: EgressEventInput) {
  return {
    ...input,
    id: row.id,
    count: row.count,
    firstAt: new Date(row.first_at),
    lastAt: new Date(row.last_at),
  };
}

async function announceDenial(deps: IngestDeps, row: EgressEventWritten, input: EgressEventInput) {
  const destination = {
    name: input.name === '' ? null : input.name,
    ip: input.ip === '' ? null : input.ip,
    port: input.port < 0 ? null : input.port,
  };
  await emitWebhookEvent(deps, input.tenantId, 'egress.denied', {
    event_id: row.id,
    claim_id: input.claimId,
    pool_id: input.poolId,
    sandbox_id: input.sandboxId,
    at: input.firstAt.toISOString(),
    protocol: input.protocol as 'tcp' | 'udp' | 'dns',
    ...destination,
    rule: input.rule,
    process: input.process,
    count: row.count,
  });
  await writeAuditEvent(deps.db, {
    tenantId: input.tenantId,
    actor: { type: 'system', component: 'egress' },
    action: 'egress.denied',
    targetType: 'claim',
    targetId: input.claimId,
    result: 'failure',
    details: {
      egress_event_id: row.id,
      protocol: input.protocol,
      ...destination,
      rule: input.rule,
    },
  }).catch(() => undefined);
}

/** egressDenialSink is ingestEgressDenials as the egress point's EgressDenialSink. */
export function egressDenialSink(deps: IngestDeps): EgressDenialSink {
  return {
    async report(batch) {
      await ingestEgressDenials(deps, batch);
    },
  };
}

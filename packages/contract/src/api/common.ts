import { z } from 'zod';
import { named } from '../registry.js';
import { OPAQUE } from '../rules.js';
import { text } from '../text.js';

/**
 * IdPrefixes: every public id is `<prefix>_<26 lowercase base32 chars>` (a ULID, time-ordered),
 * so a pasted id says what it is and a malformed one is rejected before any query runs.
 */
export const IdPrefixes = {
  tenant: 'ten',
  api_key: 'key',
  pool: 'pool',
  sandbox: 'sbx',
  claim: 'clm',
  viewer_ticket: 'vtk',
  mcp_token: 'mtk',
  secret: 'sec',
  run: 'run',
  audit_event: 'aud',
  action_record: 'act',
  idempotency_key: 'idk',
  webhook: 'whk',
  webhook_delivery: 'whd',
  webhook_event: 'msg',
  egress_event: 'egv',
  handoff: 'hof',
  replay_link: 'rpl',
  profile: 'prf',
  snapshot: 'snp',
} as const;
export type IdKind = keyof typeof IdPrefixes;

/** idOf builds the schema of one kind of id. */
export function idOf(kind: IdKind) {
  const prefix = IdPrefixes[kind];
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`), `must be a ${kind} id (${prefix}_…)`);
}

export const TenantId = idOf('tenant');
export const ApiKeyId = idOf('api_key');
export const PoolId = idOf('pool');
export const SandboxId = idOf('sandbox');
export const ClaimId = idOf('claim');
export const ViewerTicketId = idOf('viewer_ticket');
export const McpTokenId = idOf('mcp_token');
export const SecretId = idOf('secret');
export const RunId = idOf('run');
export const AuditEventId = idOf('audit_event');
export const WebhookId = idOf('webhook');
export const WebhookDeliveryId = idOf('webhook_delivery');
export const WebhookEventId = idOf('webhook_event');
export const EgressEventId = idOf('egress_event');
export const HandoffId = idOf('handoff');
export const ReplayLinkId = idOf('replay_link');
export const SnapshotId = idOf('snapshot');

/** Timestamps are RFC 3339 strings in UTC with milliseconds, as `Date#toISOString` prints them. */
export const Timestamp = z.iso.datetime({ offset: false, precision: 3 });

/**
 * ResourceName: pool and claim names are DNS-label-like so they fit Kubernetes labels,
 * Terraform resource ids and URLs without escaping.
 */
export const ResourceName = named(
  'ResourceName',
  z
    .string()
    .min(1)
    .max(63)
    .regex(
      /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/,
      'lowercase letters, digits and inner dashes, 1–63 characters',
    ),
);

/** PORT_PATTERN is a TCP port 1–65535 in decimal without leading zeros, for URL and origin patterns. */
export const PORT_PATTERN =
  '([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';

/** Metadata is caller-owned, small, string-valued and never interpreted by Cubicle. */
export const Metadata = named(
  'Metadata',
  z
    .record(text().min(1).max(63), text().max(1024))
    .refine((m) => Object.keys(m).length <= 32, 'at most 32 keys')
    .meta({ maxProperties: 32 }),
);
export type Metadata = z.infer<typeof Metadata>;

/**
 * OpaqueCursor is a `next_cursor` that encodes more than an id (base64url of a keyset). Cursors
 * are validated like ids: a malformed one is a 400 before any query runs.
 */
export const OpaqueCursor = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,200}$/, 'must be a next_cursor from this list')
  .meta(OPAQUE);

/** listQueryOf is the one list query: a page size and the previous page's `next_cursor`. */
export function listQueryOf(cursor: z.ZodString) {
  return z.strictObject({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: cursor.optional(),
  });
}

/** ListQuery pages a list whose cursor is opaque (a keyset); id-ordered lists use their id kind. */
export const ListQuery = listQueryOf(OpaqueCursor);
export type ListQuery = z.infer<typeof ListQuery>;

/** listOf is the one page shape: `next_cursor` is null on the last page. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.strictObject({ data: z.array(item), next_cursor: z.string().nullable() });
}

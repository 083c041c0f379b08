import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ReleaseReason } from './claim.js';
import {
  ClaimId,
  listQueryOf,
  Metadata,
  PoolId,
  PORT_PATTERN,
  RunId,
  SandboxId,
  SnapshotId,
  Timestamp,
  WebhookDeliveryId,
  WebhookEventId,
  WebhookId,
} from './common.js';
import { EgressDeniedData } from './egress.js';
import { HandoffRequestedData, HandoffReturnedData } from './handoff.js';
import { IPV4_PATTERN, IPV6_PATTERN } from './ip-patterns.js';
import { RunStatus } from './run.js';

/** WebhookEventType is what an endpoint subscribes to. */
export const WebhookEventType = named(
  'WebhookEventType',
  z.enum([
    'claim.activated',
    'claim.ended',
    'run.finished',
    'sandbox.failed',
    'sandbox.oom_killed',
    'egress.denied',
    'claim.handoff_requested',
    'claim.handoff_returned',
    'snapshot.created',
    'claim.paused',
    'claim.resumed',
    'profile.saved',
  ]),
);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/**
 * WebhookUrl is where events are POSTed: http(s), no credentials in it. Whether its host is
 * deliverable (not private, loopback, link-local…) is checked by the server on create and again
 * on every delivery after DNS resolution (`webhook_url_refused`).
 */
export const WebhookUrl = named(
  'WebhookUrl',
  text()
    .max(2048)
    // The pattern is what the document can publish; it admits only URLs the WHATWG parser reads as
    // written (a DNS name whose last label starts with a letter, a dotted-quad IPv4, or a bracketed
    // IPv6), so the parse below never refuses what the pattern lets through.
    .regex(
      new RegExp(
        `^https?://((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|${IPV4_PATTERN}|\\[(${IPV6_PATTERN})\\])(:${PORT_PATTERN})?([/?][^\\s#]*)?$`,
      ),
      'an absolute http(s) URL without credentials or fragment',
    )
    .refine((value) => {
      try {
        const url = new URL(value);
        return (
          (url.protocol === 'https:' || url.protocol === 'http:') &&
          url.username === '' &&
          url.password === '' &&
          url.hash === ''
        );
      } catch {
        return false;
      }
    }, 'an absolute http(s) URL without credentials or fragment'),
);

const EventList = z
  .array(WebhookEventType)
  .min(1)
  .max(WebhookEventType.options.length)
  .refine((list) => new Set(list).size === list.length, 'events must be unique')
  .meta({ uniqueItems: true });

export const CreateWebhookRequest = named(
  'CreateWebhookRequest',
  z.strictObject({
    url: WebhookUrl,
    events: EventList,
    description: text().max(500).optional(),
  }),
);
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

/**
 * UpdateWebhookRequest changes what is given. `enabled: false` stops deliveries: no new event is
 * recorded for the endpoint, and pending ones fail at their next attempt.
 */
export const UpdateWebhookRequest = named(
  'UpdateWebhookRequest',
  z
    .strictObject({
      url: WebhookUrl.optional(),
      events: EventList.optional(),
      description: text().max(500).nullable().optional(),
      enabled: z.boolean().optional(),
    })
    .refine((body) => Object.keys(body).length > 0, 'give at least one field to change')
    .meta({ minProperties: 1 }),
);
export type UpdateWebhookRequest = z.infer<typeof UpdateWebhookRequest>;

/** Webhook is an endpoint as every read shows it: never its signing secret. */
export const Webhook = named(
  'Webhook',
  z.strictObject({
    id: WebhookId,
    url: z.string(),
    events: z.array(WebhookEventType),
    description: z.string().nullable(),
    enabled: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export type Webhook = z.infer<typeof Webhook>;

/**
 * WebhookWithSecret is the answer to create and rotate, the only time the signing secret is
 * shown: `whsec_` + base64 of its bytes (Standard Webhooks). After a rotation the previous
 * secret still signs (a second `v1,` signature) for 24 hours.
 */
export const WebhookWithSecret = named(
  'WebhookWithSecret',
  z.strictObject({ ...Webhook.shape, secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/) }),
);
export type WebhookWithSecret = z.infer<typeof WebhookWithSecret>;

export const WebhookPathParams = z.strictObject({ id: WebhookId });

export const WebhookDeliveryPathParams = z.strictObject({
  id: WebhookId,
  delivery_id: WebhookDeliveryId,
});

export const WebhookDeliveryStatus = named(
  'WebhookDeliveryStatus',
  z.enum(['pending', 'delivered', 'failed']),
);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

/** WebhookAttempt is one HTTP attempt; only a short excerpt of the response body is kept. */
export const WebhookAttempt = named(
  'WebhookAttempt',
  z.strictObject({
    attempt: z.number().int().min(1),
    status_code: z.number().int().nullable(),
    /** Why the attempt failed without a 2xx: timeout, connection refused, address refused… */
    error: z.string().nullable(),
    response_excerpt: z.string().nullable(),
    duration_ms: z.number().int().min(0),
    at: Timestamp,
  }),
);
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

/**
 * WebhookDelivery is one event for one endpoint: pending until a 2xx (delivered) or until its
 * retries (exponential, for 24 hours) are spent or the address is refused (failed).
 */
export const WebhookDelivery = named(
  'WebhookDelivery',
  z.strictObject({
    id: WebhookDeliveryId,
    webhook_id: WebhookId,
    /** The `webhook-id` header: the same on every attempt, so receivers can deduplicate. */
    event_id: WebhookEventId,
    event_type: WebhookEventType,
    status: WebhookDeliveryStatus,
    attempt_count: z.number().int().min(0),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    /** When the next attempt is due; null once delivered or failed. */
    next_attempt_at: Timestamp.nullable(),
    created_at: Timestamp,
    finished_at: Timestamp.nullable(),
    attempts: z.array(WebhookAttempt),
  }),
);
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryListQuery = z.strictObject({
  ...listQueryOf(WebhookDeliveryId).shape,
  status: WebhookDeliveryStatus.optional(),
});
export type WebhookDeliveryListQuery = z.infer<typeof WebhookDeliveryListQuery>;

export const ClaimActivatedData = named(
  'ClaimActivatedData',
  z.strictObject({
    claim_id: ClaimId,
    name: z.string(),
    pool: z.string(),
    pool_id: PoolId,
    sandbox_id: SandboxId,
    metadata: Metadata,
  }),
);
export const ClaimEndedData = named(
  'ClaimEndedData',
  z.strictObject({
    claim_id: ClaimId,
    name: z.string(),
    pool: z.string(),
    pool_id: PoolId,
    sandbox_id: SandboxId.nullable(),
    metadata: Metadata,
    reason: ReleaseReason,
  }),
);
export const RunFinishedData = named(
  'RunFinishedData',
  z.strictObject({
    run_id: RunId,
    claim_id: ClaimId,
    status: RunStatus,
    exit_code: z.number().int().nullable(),
    /** Why a run ended without its own exit (cancelled, timeout, worker_lost, claim_ended…). */
    reason: z.string().nullable(),
  }),
);
export const SandboxFailedData = named(
  'SandboxFailedData',
  z.strictObject({
    sandbox_id: SandboxId,
    pool: z.string(),
    pool_id: PoolId,
    reason: z.string(),
  }),
);

/**
 * SandboxOomKilledData: the sandbox's memory limit killed processes inside it (never the host's).
 * `oom_kills` counts them since the sandbox started; `sandbox_failed` says the sandbox died with
 * it (its failure reason is then `oom_killed`), otherwise it keeps running.
 */
export const SandboxOomKilledData = named(
  'SandboxOomKilledData',
  z.strictObject({
    sandbox_id: SandboxId,
    pool: z.string(),
    pool_id: PoolId,
    /** The claim holding the sandbox (its last one, once ended); null for an unclaimed sandbox. */
    claim_id: ClaimId.nullable(),
    oom_kills: z.number().int().min(1),
    /** The limit that was reached, as the kernel applied it; null when none was read. */
    memory_limit_mb: z.number().int().nullable(),
    sandbox_failed: z.boolean(),
  }),
);

/**
 * ClaimPausedData: the claim's desktop was frozen, by `POST /v1/claims/{id}/pause` (`api`) or
 * by the pool's idle_pause_seconds (`idle`).
 */
export const ClaimPausedData = named(
  'ClaimPausedData',
  z.strictObject({
    claim_id: ClaimId,
    pool: z.string(),
    pool_id: PoolId,
    sandbox_id: SandboxId,
    reason: z.enum(['api', 'idle']),
  }),
);

/**
 * ClaimResumedData: the claim's desktop runs again, by `POST /v1/claims/{id}/resume` (`api`) or
 * transparently before a driving call (`drive`), a viewer connection (`viewer`) or a run
 * (`run`); `paused_seconds` is how long this pause lasted.
 */
export const ClaimResumedData = named(
  'ClaimResumedData',
  z.strictObject({
    claim_id: ClaimId,
    pool: z.string(),
    pool_id: PoolId,
    sandbox_id: SandboxId,
    reason: z.enum(['api', 'drive', 'viewer', 'run']),
    paused_seconds: z.number().min(0),
  }),
);

/** SnapshotCreatedData: a claim's snapshot is stored and ready to fork. */
export const SnapshotCreatedData = named(
  'SnapshotCreatedData',
  z.strictObject({
    snapshot_id: SnapshotId,
    name: z.string().nullable(),
    claim_id: ClaimId,
    pool: z.string(),
    size_bytes: z.number().int().min(0),
    file_count: z.number().int().min(0),
  }),
);

/**
 * ProfileSavedData: a profile has a new version, saved at its claim's release (`release`) or on
 * `POST /v1/claims/{id}/profile/save` (`request`).
 */
export const ProfileSavedData = named(
  'ProfileSavedData',
  z.strictObject({
    profile: z.string(),
    version: z.int().min(1),
    size_bytes: z.int().min(0),
    claim_id: ClaimId,
    reason: z.enum(['release', 'request']),
  }),
);

/** WebhookEventData maps each event type to the `data` of its payload. */
export const WebhookEventData = {
  'claim.activated': ClaimActivatedData,
  'claim.ended': ClaimEndedData,
  'run.finished': RunFinishedData,
  'sandbox.failed': SandboxFailedData,
  'sandbox.oom_killed': SandboxOomKilledData,
  'egress.denied': EgressDeniedData,
  'claim.handoff_requested': HandoffRequestedData,
  'claim.handoff_returned': HandoffReturnedData,
  'snapshot.created': SnapshotCreatedData,
  'claim.paused': ClaimPausedData,
  'claim.resumed': ClaimResumedData,
  'profile.saved': ProfileSavedData,
} as const satisfies Record<WebhookEventType, z.ZodType>;
export type WebhookEventDataOf<T extends WebhookEventType> = z.infer<(typeof WebhookEventData)[T]>;

/**
 * WebhookPayload is the JSON body of every delivery (Standard Webhooks): `type`, `timestamp`
 * (when the event happened) and `data`. The body is signed as sent, headers `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`.
 */
export const WebhookPayload = named(
  'WebhookPayload',
  z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('claim.activated'),
      timestamp: Timestamp,
      data: ClaimActivatedData,
    }),
    z.strictObject({ type: z.literal('claim.ended'), timestamp: Timestamp, data: ClaimEndedData }),
    z.strictObject({
      type: z.literal('run.finished'),
      timestamp: Timestamp,
      data: RunFinishedData,
    }),
    z.strictObject({
      type: z.literal('sandbox.failed'),
      timestamp: Timestamp,
      data: SandboxFailedData,
    }),
    z.strictObject({
      type: z.literal('sandbox.oom_killed'),
      timestamp: Timestamp,
      data: SandboxOomKilledData,
    }),
    z.strictObject({
      type: z.literal('egress.denied'),
      timestamp: Timestamp,
      data: EgressDeniedData,
    }),
    z.strictObject({
      type: z.literal('claim.handoff_requested'),
      timestamp: Timestamp,
      data: HandoffRequestedData,
    }),
    z.strictObject({
      type: z.literal('claim.handoff_returned'),
      timestamp: Timestamp,
      data: HandoffReturnedData,
    }),
    z.strictObject({
      type: z.literal('snapshot.created'),
      timestamp: Timestamp,
      data: SnapshotCreatedData,
    }),
    z.strictObject({
      type: z.literal('claim.paused'),
      timestamp: Timestamp,
      data: ClaimPausedData,
    }),
    z.strictObject({
      type: z.literal('claim.resumed'),
      timestamp: Timestamp,
      data: ClaimResumedData,
    }),
    z.strictObject({
      type: z.literal('profile.saved'),
      timestamp: Timestamp,
      data: ProfileSavedData,
    }),
  ]),
);
export type WebhookPayload = z.infer<typeof WebhookPayload>;

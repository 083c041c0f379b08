import { z } from 'zod';
import { named } from '../registry.js';
import { ApiKeyId, AuditEventId, Timestamp } from './common.js';

export const AuditActor = named(
  'AuditActor',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('api_key'), api_key_id: ApiKeyId, key_prefix: z.string() }),
    z.strictObject({ type: z.literal('system'), component: z.string() }),
    z.strictObject({ type: z.literal('operator') }),
  ]),
);

/** AuditEvent: one per mutating call (and per reclaim the system makes), success or failure. */
export const AuditEvent = named(
  'AuditEvent',
  z.strictObject({
    id: AuditEventId,
    actor: AuditActor,
    action: z.string().regex(/^[a-z_]+\.[a-z_]+$/, 'resource.verb'),
    target_type: z.string(),
    target_id: z.string().nullable(),
    result: z.enum(['success', 'failure']),
    status_code: z.number().int().nullable(),
    request_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  }),
);
export type AuditEvent = z.infer<typeof AuditEvent>;

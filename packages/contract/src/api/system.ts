import { z } from 'zod';
import { named } from '../registry.js';

export const API_VERSION = 'v1' as const;

/** CUBICLE_VERSION is the release of the contract (and of the services built from it). */
export const CUBICLE_VERSION = '0.1.0';

export const Healthz = named(
  'Healthz',
  z.strictObject({
    status: z.enum(['ok', 'degraded']),
    checks: z.record(z.string(), z.enum(['ok', 'error', 'skipped'])),
  }),
);
export type Healthz = z.infer<typeof Healthz>;

export const Version = named(
  'Version',
  z.strictObject({
    service: z.literal('cubicle-api'),
    version: z.string(),
    api_version: z.literal(API_VERSION),
    guest_protocol_version: z.string(),
    node: z.string(),
  }),
);
export type Version = z.infer<typeof Version>;

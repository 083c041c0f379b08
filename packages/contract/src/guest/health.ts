import { z } from 'zod';
import { named } from '../registry.js';
import { GUEST_PROTOCOL_VERSION } from './common.js';

/**
 * HealthzResponse is the only unauthenticated guest answer, so it carries versions and
 * readiness but nothing about what runs on the desktop. `degraded` means the driver is up but
 * the display or the accessibility bus is not: shell and files work, observe and act do not.
 */
export const HealthzResponse = named(
  'GuestHealthzResponse',
  z.strictObject({
    status: z.enum(['ok', 'degraded']),
    protocol_version: z.literal(GUEST_PROTOCOL_VERSION),
    display: z.strictObject({
      /** X display name, e.g. `:1`. */
      name: z.string().regex(/^:[0-9]+(\.[0-9]+)?$/, 'an X display name such as :1'),
      available: z.boolean(),
      width: z.int().min(1).optional(),
      height: z.int().min(1).optional(),
    }),
    a11y_bus: z.strictObject({
      available: z.boolean(),
      /** Whether `org.a11y.atspi.Registry` answered; apps are invisible to observe without it. */
      registry_available: z.boolean(),
    }),
    /** Localhost port of the supervised x11vnc; null while it is not running. */
    vnc_port: z.int().min(1).max(65_535).nullable(),
    versions: z.strictObject({
      driver: z.string().min(1).max(64),
      node: z.string().min(1).max(64),
      at_spi: z.string().max(64).optional(),
      x_server: z.string().max(64).optional(),
    }),
    uptime_ms: z.number().min(0),
  }),
);
export type HealthzResponse = z.infer<typeof HealthzResponse>;

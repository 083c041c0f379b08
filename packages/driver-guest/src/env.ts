import { envVars, loadEnv } from '@cubicle/config';
import { z } from 'zod';

/**
 * GuestEnv is the guest driver's configuration inside a sandbox. The token authenticates the
 * control plane; it is delivered per sandbox (a Kubernetes Secret, cloud-init, or the local
 * launcher) and never logged.
 */
export const GuestEnv = z.object({
  GUEST_HOST: envVars.host('127.0.0.1'),
  GUEST_PORT: envVars.port(3211),
  GUEST_TOKEN: z.string().min(32, 'must be at least 32 characters'),
  DISPLAY: z
    .string()
    .regex(/^:[0-9]+(\.[0-9]+)?$/, 'an X display name such as :1')
    .default(':0'),
  LOG_LEVEL: envVars.logLevel(),
  /** Largest file a files call may read or write. */
  GUEST_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
});
export type GuestEnv = z.infer<typeof GuestEnv>;

export function loadGuestEnv(source: Record<string, string | undefined> = process.env): GuestEnv {
  return loadEnv('cubicle-guest', GuestEnv, source);
}

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
  /** The desktop's session bus; the accessibility bus is found through it. */
  DBUS_SESSION_BUS_ADDRESS: z.string().min(1).optional(),
  /**
   * Port of an x11vnc someone else supervises (the desktop launcher); /healthz reports it while
   * it answers. Without it, GUEST_SUPERVISE_VNC makes the daemon run its own x11vnc.
   */
  GUEST_VNC_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** The address that x11vnc listens on (a pod's own IP in the test cluster); 127.0.0.1 by default. */
  GUEST_VNC_HOST: envVars.host('127.0.0.1'),
  GUEST_SUPERVISE_VNC: envVars.boolean(false),
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

/**
 * inheritedEnv is the environment handed to processes the driver starts (shell runs, apps):
 * the daemon's own, which the launcher set up for the desktop (DISPLAY, buses, a11y settings).
 */
export function inheritedEnv(): Record<string, string | undefined> {
  return { ...process.env };
}

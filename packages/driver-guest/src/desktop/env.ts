import { loadEnv } from '@cubicle/config';
import { z } from 'zod';

/**
 * LauncherEnv is what `cubicle-desktop start` reads from its environment when it is a sandbox
 * image's entrypoint: the guest token (from the sandbox's Secret; never on the command line,
 * where /proc shows it) and the guest port. Both optional: a developer's launch picks its own.
 */
export const LauncherEnv = z.object({
  CUBICLE_GUEST_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  CUBICLE_GUEST_PORT: z.coerce.number().int().min(1).max(65535).optional(),
});
export type LauncherEnv = z.infer<typeof LauncherEnv>;

export function loadLauncherEnv(
  source: Record<string, string | undefined> = process.env,
): LauncherEnv {
  return loadEnv('cubicle-desktop', LauncherEnv, source);
}

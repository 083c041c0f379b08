import 'server-only';
import { Version } from '@cubicle/contract/api';
import { getEnv } from './env';

export type ApiStatus =
  { ok: true; version: Version; healthy: boolean } | { ok: false; reason: string };

/** apiStatus asks the API for its version and health; the dashboard shows either, never throws. */
export async function apiStatus(): Promise<ApiStatus> {
  try {
    const [version, health] = await Promise.all([
      fetch(`${getEnv().CUBICLE_API_URL}/v1/version`, {
        cache: 'no-store',
        signal: AbortSignal.timeout(3000),
      }),
      fetch(`${getEnv().CUBICLE_API_URL}/healthz`, {
        cache: 'no-store',
        signal: AbortSignal.timeout(3000),
      }),
    ]);
    return { ok: true, version: Version.parse(await version.json()), healthy: health.ok };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : 'unreachable' };
  }
}

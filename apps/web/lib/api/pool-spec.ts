import 'server-only';
import type { Cubicle, Pool } from '@cubicle/sdk';

/** The body of PUT /v1/pools/{name}, as the SDK types it. */
export type PoolSpecBody = Parameters<Cubicle['pools']['apply']>[1];

/**
 * specOf is a pool's whole spec as the API described it. PUT takes the whole spec, so a form that
 * changes one field sends the rest back unchanged through this one list: a field added to pools
 * later is kept by every form, not dropped by the ones that forgot it (an unchanged template does
 * not roll warm sandboxes).
 */
export function specOf(pool: Pool): PoolSpecBody {
  return {
    image: pool.image,
    backend: pool.backend,
    cpu: pool.cpu,
    memory_mb: pool.memory_mb,
    autoscaling: pool.autoscaling,
    claim_ttl_seconds: pool.claim_ttl_seconds,
    max_claim_lifetime_seconds: pool.max_claim_lifetime_seconds,
    idle_timeout_seconds: pool.idle_timeout_seconds,
    idle_pause_seconds: pool.idle_pause_seconds,
    env: pool.env,
    kubernetes: pool.kubernetes,
    prime: pool.prime,
    egress: pool.egress,
    // The view adds its measured cost (`estimate`), which the spec does not take (strict: a 400).
    recording: pool.recording && {
      video: pool.recording.video,
      fps: pool.recording.fps,
      quality: pool.recording.quality,
    },
    profile_paths: pool.profile_paths,
  };
}

import type {
  PoolRecording,
  PoolRecordingView,
  RecordingOptions,
  RecordingQuality,
} from '@cubicle/contract/api';
import { RECORDING_DEFAULT_FPS } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Prisma } from '@cubicle/db';
import type { Deps } from '../resources.js';
import { estimateRecording } from './recording-estimate.js';

/** The settings a recorded claim runs with. */
export interface EffectiveRecording {
  fps: number;
  quality: RecordingQuality;
}

/** storedPoolRecording reads `pools.recording` (null: the pool offers none). */
export function storedPoolRecording(value: Prisma.JsonValue | null): PoolRecording | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Partial<PoolRecording>;
  return {
    video: v.video === true,
    fps: v.fps ?? RECORDING_DEFAULT_FPS,
    quality: v.quality ?? 'medium',
  };
}

/** poolRecordingView is the pool's settings with their measured cost (null offers none). */
export function poolRecordingView(value: Prisma.JsonValue | null): PoolRecordingView | null {
  const pool = storedPoolRecording(value);
  return pool && { ...pool, estimate: estimateRecording(pool.fps, pool.quality) };
}

/**
 * effectiveRecording decides whether a claim is recorded and how: the claim's own `recording`
 * wins over the pool's `video` default, and its fps/quality left out take the pool's. A pool
 * that offers none records nothing; a claim asking anyway is refused (recording_not_allowed),
 * never silently unrecorded: its owner expects a video.
 */
export function effectiveRecording(
  pool: PoolRecording | null,
  claim: RecordingOptions | undefined,
): EffectiveRecording | null {
  if (!pool) {
    if (claim?.video)
      throw new AppError(
        'recording_not_allowed',
        "this pool offers no recording: set the pool's `recording` first",
      );
    return null;
  }
  const isOn = claim ? claim.video : pool.video;
  if (!isOn) return null;
  return { fps: claim?.fps ?? pool.fps, quality: claim?.quality ?? pool.quality };
}

/**
 * checkClaimRecording refuses a claim that asks for recording from a pool offering none, before
 * anything is taken. An unknown pool is left to the claim statement (not_found as usual).
 */
export async function checkClaimRecording(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  poolName: string,
  options: RecordingOptions | undefined,
): Promise<void> {
  if (!options?.video) return;
  const pool = await deps.db.pool.findFirst({
    where: { tenantId, name: poolName, deletedAt: null },
    select: { recording: true },
  });
  if (pool) effectiveRecording(storedPoolRecording(pool.recording), options);
}

/**
 * startClaimRecording makes a new claim's recording row when its pool (or the claim) turns
 * recording on; the worker's puller starts the encoder once the claim holds a desktop.
 * `poolRecording`: the pool's `recording` column as the caller already read it (the claim
 * statement returns it with the claim), so a claim of a pool without recording costs no query;
 * left out, the pool is read here.
 */
export async function startClaimRecording(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  claimId: string,
  poolId: string,
  options: RecordingOptions | undefined,
  poolRecording?: Prisma.JsonValue | null,
): Promise<void> {
  const stored =
    poolRecording !== undefined
      ? poolRecording
      : ((
          await deps.db.pool.findUnique({
            where: { id: poolId },
            select: { recording: true },
          })
        )?.recording ?? null);
  const settings = effectiveRecording(storedPoolRecording(stored), options);
  if (!settings) return;
  await deps.db.recording.upsert({
    where: { claimId },
    create: { claimId, tenantId, fps: settings.fps, quality: settings.quality },
    update: {},
  });
}

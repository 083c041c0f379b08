import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ClaimId, listQueryOf, PoolId, ResourceName, SnapshotId, Timestamp } from './common.js';

/** The most claims one fork call makes (`count`); larger fleets are several calls. */
export const MAX_FORK_COUNT = 20;
/** The most paths one snapshot names. */
export const MAX_SNAPSHOT_PATHS = 16;

/**
 * isSnapshotPath: a path relative to the desktop's home (`Documents`, `.config/chromium`): no
 * leading `/`, no `.`, `..` or empty segment, no NUL, so a snapshot cannot name anything outside
 * the home whatever the guest holds (the guest checks again and never follows a symlink out).
 * The same rule as the guest archive's HomePath.
 */
export function isSnapshotPath(path: string): boolean {
  if (path.length === 0 || path.length > 1024 || path.includes('\0') || path.startsWith('/'))
    return false;
  return path.split('/').every((seg) => seg !== '..' && seg !== '' && seg !== '.');
}

/**
 * SNAPSHOT_PATH_PATTERN is isSnapshotPath's segment rule as a JSON Schema pattern, for the
 * published document (the NUL rule is text()'s own pattern); snapshot.test.ts holds them together.
 */
export const SNAPSHOT_PATH_PATTERN = '^(?![\\s\\S]*(?:^|/)\\.{0,2}(?:/|$))[\\s\\S]+$';

export const SnapshotPath = named(
  'SnapshotPath',
  text()
    .min(1)
    .max(1024)
    .refine(isSnapshotPath, 'a path relative to the home, without `.`, `..` or empty segments')
    .meta({
      description:
        'A path relative to the desktop home (e.g. `Documents`, `.config/chromium`): no leading `/`, no `.`, `..` or empty segments.',
      allOf: [{ pattern: SNAPSHOT_PATH_PATTERN }],
    }),
);
export type SnapshotPath = z.infer<typeof SnapshotPath>;

/** SnapshotStatus: `creating` while the guest packs it, `ready` to fork, `failed` (kept for its error). */
export const SnapshotStatus = named('SnapshotStatus', z.enum(['creating', 'ready', 'failed']));
export type SnapshotStatus = z.infer<typeof SnapshotStatus>;

/**
 * Snapshot is a filesystem snapshot of one claim's desktop (its home, or the `paths` it named),
 * stored sealed in the tenant's object store. Fork it with `POST /v1/pools/{name}/claims
 * {from_snapshot}`.
 */
export const Snapshot = named(
  'Snapshot',
  z.strictObject({
    id: SnapshotId,
    name: ResourceName.nullable(),
    status: SnapshotStatus,
    /** What was packed, relative to the home: `["."]` is the whole home. */
    paths: z.array(z.string()),
    /** The claim it was taken from, and its pool (by name as it was then). */
    source: z.strictObject({ claim_id: ClaimId, pool: ResourceName, pool_id: PoolId }),
    /** Bytes of the files packed (before sealing and compression). */
    size_bytes: z.number().int().min(0),
    /** Bytes the sealed objects take in the store (what the `snapshot_bytes` quota counts). */
    stored_bytes: z.number().int().min(0),
    file_count: z.number().int().min(0),
    created_at: Timestamp,
    /** When the retention sweep deletes it (the tenant's `snapshot_retention_days` after creation). */
    expires_at: Timestamp,
  }),
);
export type Snapshot = z.infer<typeof Snapshot>;

/**
 * CreateSnapshotRequest: `paths` (relative to the home) default to the whole home. With `Idempotency-Key`, a
 * retry with the same body answers the same snapshot.
 */
export const CreateSnapshotRequest = named(
  'CreateSnapshotRequest',
  z.strictObject({
    name: ResourceName.optional(),
    paths: z.array(SnapshotPath).min(1).max(MAX_SNAPSHOT_PATHS).optional(),
  }),
);
export type CreateSnapshotRequest = z.infer<typeof CreateSnapshotRequest>;

export const SnapshotListQuery = listQueryOf(SnapshotId);
export type SnapshotListQuery = z.infer<typeof SnapshotListQuery>;

export const SnapshotPathParams = z.strictObject({ id: SnapshotId });

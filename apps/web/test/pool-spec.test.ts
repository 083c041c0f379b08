import { PoolSpec } from '@cubicle/contract/api';
import type { Pool } from '@cubicle/sdk';
import { describe, expect, it, vi } from 'vitest';

// pool-spec.ts is marked server-only (a build-time marker whose plain import throws outside
// React Server Components); the function itself is pure.
vi.mock('server-only', () => ({}));
const { specOf } = await import('../lib/api/pool-spec');

// A pool as GET /v1/pools/{name} shows it, with every optional field of the spec set.
const pool: Pool = {
  id: 'pool_01m8r01w2az0e7etgysj469kea',
  name: 'checkout',
  image: 'local',
  backend: 'local',
  cpu: 1.5,
  memory_mb: 4096,
  autoscaling: { min: 0, initial: 1, max: 4 },
  claim_ttl_seconds: 600,
  max_claim_lifetime_seconds: 7200,
  idle_timeout_seconds: 120,
  idle_pause_seconds: 300,
  env: { LANG: 'C.UTF-8' },
  kubernetes: null,
  egress: { mode: 'allowlist', allow: ['api.example.com:443'], deny: [] },
  prime: null,
  recording: {
    video: true,
    fps: 10,
    quality: 'high',
    estimate: { cpu_pct_one_core: 31.5, mb_per_min: 4.2 },
  },
  profile_paths: ['.config/chromium', 'Downloads'],
  state: 'active',
  generation: 2,
  counts: { provisioning: 0, warm: 1, claimed: 0, releasing: 0, failed: 0 },
  created_at: '2026-12-01T00:00:00.000Z',
  updated_at: '2026-12-01T00:01:00.000Z',
};

describe('specOf', () => {
  it('sends back every field of the spec, so saving one form keeps the others', () => {
    const spec = specOf(pool);
    // Every PoolSpec field is sent: one the API gains later fails here until specOf sends it.
    expect(Object.keys(spec).sort()).toEqual(Object.keys(PoolSpec.shape).sort());
    expect(spec.recording).toEqual({ video: true, fps: 10, quality: 'high' });
    expect(spec.profile_paths).toEqual(['.config/chromium', 'Downloads']);
  });

  it('is a body the API accepts as it stands (no view-only estimate), equal to the pool', () => {
    const parsed = PoolSpec.safeParse(specOf(pool));
    expect(parsed.error?.issues).toBeUndefined();
    expect(parsed.data).toMatchObject({
      recording: { video: true, fps: 10, quality: 'high' },
      profile_paths: ['.config/chromium', 'Downloads'],
      idle_pause_seconds: 300,
    });
  });

  it('keeps null as null (no recording offered, the default profile paths)', () => {
    const spec = specOf({ ...pool, recording: null, profile_paths: null });
    expect(spec.recording).toBeNull();
    expect(spec.profile_paths).toBeNull();
    expect(PoolSpec.safeParse(spec).success).toBe(true);
  });
});

import { z } from 'zod';
import { named } from '../registry.js';
import { PoolId, SandboxId, Timestamp } from './common.js';
import { Backend } from './pool.js';

/**
 * SandboxState: provisioning → warm → claimed → releasing → deleted, with failed reachable
 * from any live state. `deleted` and `failed` are terminal: a sandbox is never reused after a claim.
 */
export const SandboxState = named(
  'SandboxState',
  z.enum(['provisioning', 'warm', 'claimed', 'releasing', 'deleted', 'failed']),
);
export type SandboxState = z.infer<typeof SandboxState>;

/** SandboxTransitions is the state machine as data; the database layer refuses anything else. */
export const SandboxTransitions = {
  provisioning: ['warm', 'releasing', 'failed'],
  warm: ['claimed', 'releasing', 'failed'],
  claimed: ['releasing', 'failed'],
  releasing: ['deleted', 'failed'],
  deleted: [],
  failed: ['releasing', 'deleted'],
} as const satisfies Record<SandboxState, readonly SandboxState[]>;

export function isSandboxTransitionAllowed(from: SandboxState, to: SandboxState): boolean {
  return (SandboxTransitions[from] as readonly SandboxState[]).includes(to);
}

export const Sandbox = named(
  'Sandbox',
  z.strictObject({
    id: SandboxId,
    pool_id: PoolId,
    pool: z.string(),
    state: SandboxState,
    backend: Backend,
    image: z.string(),
    generation: z.number().int().min(1),
    /** Why it failed (`oom_killed`: it died after its memory limit killed processes in it). */
    failure_reason: z.string().nullable(),
    /**
     * Processes its memory limit (the pool's `memory_mb`) has killed inside it so far, as the
     * worker last read them (each rise is also a `sandbox.oom_killed` event); 0 where the backend
     * does not count them (local sandboxes do).
     */
    oom_kills: z.number().int().min(0),
    created_at: Timestamp,
    ready_at: Timestamp.nullable(),
    claimed_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
  }),
);
export type Sandbox = z.infer<typeof Sandbox>;

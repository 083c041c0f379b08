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
    failure_reason: z.string().nullable(),
    created_at: Timestamp,
    ready_at: Timestamp.nullable(),
    claimed_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
  }),
);
export type Sandbox = z.infer<typeof Sandbox>;

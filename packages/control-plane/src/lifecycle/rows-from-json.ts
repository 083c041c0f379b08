import type { Claim, Sandbox } from '@cubicle/db';

type Json = Record<string, unknown>;

/** ClaimRow is a claim with its pool's name and its sandbox, in the ORM's shape. */
export type ClaimRow = Claim & { pool: { name: string }; sandbox: Sandbox | null };

const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
const dateOrThrow = (v: unknown) => new Date(v as string);

/**
 * claimFromJson and sandboxFromJson turn `row_to_json` output of the claim statement into the
 * shapes Prisma returns, so one view function renders both paths.
 */
export function claimFromJson(j: Json): Claim {
  return {
    id: j.id as string,
    tenantId: j.tenant_id as string,
    poolId: j.pool_id as string,
    sandboxId: (j.sandbox_id as string | null) ?? null,
    name: j.name as string,
    status: j.status as Claim['status'],
    metadata: j.metadata as Claim['metadata'],
    ttlSeconds: j.ttl_seconds as number,
    idleTimeoutSeconds: (j.idle_timeout_seconds as number | null) ?? null,
    expiresAt: dateOrThrow(j.expires_at),
    maxExpiresAt: dateOrThrow(j.max_expires_at),
    lastHeartbeatAt: dateOrThrow(j.last_heartbeat_at),
    releasedAt: date(j.released_at),
    activatedAt: date(j.activated_at),
    releaseReason: (j.release_reason as Claim['releaseReason']) ?? null,
    createdAt: dateOrThrow(j.created_at),
    updatedAt: dateOrThrow(j.updated_at),
  };
}

export function sandboxFromJson(j: Json): Sandbox {
  return {
    id: j.id as string,
    tenantId: j.tenant_id as string,
    poolId: j.pool_id as string,
    state: j.state as Sandbox['state'],
    backend: j.backend as Sandbox['backend'],
    image: j.image as string,
    generation: j.generation as number,
    backendRef: (j.backend_ref as string | null) ?? null,
    guestEndpoint: (j.guest_endpoint as string | null) ?? null,
    vncEndpoint: (j.vnc_endpoint as string | null) ?? null,
    // Never rendered; not worth decoding from the JSON hex form.
    guestTokenCiphertext: null,
    failureReason: (j.failure_reason as string | null) ?? null,
    stateReason: (j.state_reason as string | null) ?? null,
    createdAt: dateOrThrow(j.created_at),
    updatedAt: dateOrThrow(j.updated_at),
    readyAt: date(j.ready_at),
    claimedAt: date(j.claimed_at),
    endedAt: date(j.ended_at),
    cpuMillis: (j.cpu_millis as number | null) ?? null,
    memoryMb: (j.memory_mb as number | null) ?? null,
    oomKills: (j.oom_kills as number | undefined) ?? 0,
  };
}

/** A claim with what its view shows, as one row of plain SQL gives it (`to_jsonb` of each). */
export interface ClaimJsonRow {
  claim: Record<string, unknown>;
  pool_name: string;
  sandbox: Record<string, unknown> | null;
}

/** claimRowOf turns a ClaimJsonRow into the shape toClaimView renders (the ORM's shape). */
export function claimRowOf(r: ClaimJsonRow): ClaimRow {
  return {
    ...claimFromJson(r.claim),
    pool: { name: r.pool_name },
    sandbox: r.sandbox ? sandboxFromJson(r.sandbox) : null,
  };
}

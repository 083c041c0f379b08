import type { Claim, Prisma, Sandbox } from '@cubicle/db';
import { z } from 'zod';
import { claimFromJson } from '../repositories/claims.js';
import { sandboxFromJson } from '../repositories/sandboxes.js';

/**
 * A `to_jsonb` row (claim, sandbox): a JSON object, whose fields claimFromJson and sandboxFromJson
 * read one by one. Not z.record: its keys are strings by JSON's rules, and checking each key and
 * copying the object cost more than the rest of the row's parse (measured on the claim path).
 */
const JsonRow = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'expected a JSON object',
);

/**
 * One row of cubicle_claim_batch, as it crosses from SQL: parsed, never trusted by shape. The
 * function decides the outcome (packages/db/sql/functions/cubicle_claim_batch.sql lists them).
 */
export const ClaimBatchRow = z.object({
  idx: z.number().int(),
  outcome: z.enum([
    'active',
    'pending',
    'reconnect',
    'replay',
    'quota_exceeded',
    'pool_not_found',
    'key_reused',
    'key_in_progress',
    'error',
  ]),
  pool_id: z.string().nullable(),
  lim: z.number().int().nullable(),
  used: z.number().int().nullable(),
  replay_status: z.number().int().nullable(),
  claim: JsonRow.nullable(),
  sandbox: JsonRow.nullable(),
  err_code: z.string().nullable(),
  err_message: z.string().nullable(),
  has_hooks: z.boolean().nullable(),
  // pools.recording as stored (read by storedPoolRecording); null when the pool offers none.
  pool_recording: z.unknown(),
});
export type ClaimBatchRow = z.infer<typeof ClaimBatchRow>;

/**
 * The pool's `recording` column as the claim statement read it with the pool row (null: the
 * pool offers none), so a new claim's recording is decided without reading the pool again.
 */
export type PoolRecordingJson = Prisma.JsonValue | null;

/** What became of one claim request, decided in one place (the claim batch function). */
export type ClaimOutcome =
  /**
   * A new claim holding a warm sandbox; `hasHooks`: the tenant has an endpoint subscribed to
   * claim.activated.
   */
  | {
      kind: 'active';
      poolId: string;
      claim: Claim;
      sandbox: Sandbox;
      hasHooks: boolean;
      poolRecording: PoolRecordingJson;
    }
  /** A new claim waiting for a sandbox. */
  | { kind: 'pending'; poolId: string; claim: Claim; poolRecording: PoolRecordingJson }
  /** A live claim of the requested name already existed: that claim. */
  | { kind: 'reconnect'; poolId: string; claim: Claim; sandbox: Sandbox | null }
  /** The Idempotency-Key was used with the same body: that request's claim and answer. */
  | {
      kind: 'replay';
      poolId: string;
      claim: Claim;
      sandbox: Sandbox | null;
      status: 200 | 201 | 202;
    }
  | { kind: 'quota_exceeded'; limit: number; used: number }
  | { kind: 'pool_not_found' }
  /** The Idempotency-Key was used with another body. */
  | { kind: 'key_reused' }
  /** The Idempotency-Key belongs to a request that has not recorded its answer. */
  | { kind: 'key_in_progress' }
  /** The database refused the item (SQLSTATE `code`); it changed nothing. */
  | { kind: 'refused'; code: string; message: string };

// Built once: a zod schema costs more to construct than to run, and this runs for every claim.
const replayStatus = z.union([z.literal(200), z.literal(201), z.literal(202)]);
const PoolId = z.string();

/** claimOutcomeOf turns a parsed batch row into its outcome; a row missing its facts throws. */
export function claimOutcomeOf(row: ClaimBatchRow): ClaimOutcome {
  const poolId = () => PoolId.parse(row.pool_id);
  const claim = () => {
    if (!row.claim) throw new Error(`a ${row.outcome} outcome came back without its claim`);
    return claimFromJson(row.claim);
  };
  const sandbox = () => (row.sandbox ? sandboxFromJson(row.sandbox) : null);
  const poolRecording = () => (row.pool_recording ?? null) as PoolRecordingJson;
  switch (row.outcome) {
    case 'active': {
      const taken = sandbox();
      if (!taken) throw new Error('an active claim came back without its sandbox');
      return {
        kind: 'active',
        poolId: poolId(),
        claim: claim(),
        sandbox: taken,
        hasHooks: row.has_hooks === true,
        poolRecording: poolRecording(),
      };
    }
    case 'pending':
      return { kind: 'pending', poolId: poolId(), claim: claim(), poolRecording: poolRecording() };
    case 'reconnect':
      return { kind: 'reconnect', poolId: poolId(), claim: claim(), sandbox: sandbox() };
    case 'replay':
      return {
        kind: 'replay',
        poolId: poolId(),
        claim: claim(),
        sandbox: sandbox(),
        status: replayStatus.parse(row.replay_status),
      };
    case 'quota_exceeded':
      return { kind: 'quota_exceeded', limit: row.lim ?? 0, used: row.used ?? 0 };
    case 'pool_not_found':
      return { kind: 'pool_not_found' };
    case 'key_reused':
      return { kind: 'key_reused' };
    case 'key_in_progress':
      return { kind: 'key_in_progress' };
    case 'error':
      return {
        kind: 'refused',
        code: row.err_code ?? 'XX000',
        message: row.err_message ?? 'claim refused',
      };
    default:
      return row.outcome satisfies never;
  }
}

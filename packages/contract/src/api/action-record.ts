import { z } from 'zod';
import { ActionEffect, ActionResult } from '../guest/action-result.js';
import { named } from '../registry.js';
import { ClaimId, idOf, SandboxId, Timestamp } from './common.js';

export const ActionRecordId = idOf('action_record');

/**
 * ActionRecord is one stored ActionResult of a claim: every element action, pixel input and
 * window close made through the API. `request` is what was asked, with typed text, set values
 * and file contents replaced by `"[redacted]"` (they may be passwords); `result` is exactly what
 * the guest answered.
 */
export const ActionRecord = named(
  'ActionRecord',
  z.strictObject({
    id: ActionRecordId,
    claim_id: ClaimId,
    sandbox_id: SandboxId,
    /** The guest operation (`act.element`, `act.pixel`, `windows.close`). */
    operation: z.string(),
    request: z.record(z.string(), z.unknown()),
    result: ActionResult,
    effect: ActionEffect,
    duration_ms: z.int().min(0),
    created_at: Timestamp,
  }),
);
export type ActionRecord = z.infer<typeof ActionRecord>;

/** ClaimScreenshotQuery: the raw-PNG screenshot takes its options from the query string. */
export const ClaimScreenshotQuery = z.strictObject({
  window_id: z.coerce.number().int().min(1).max(0xffffffff).optional(),
  max_dimension: z.coerce.number().int().min(64).max(8192).optional(),
});
export type ClaimScreenshotQuery = z.infer<typeof ClaimScreenshotQuery>;

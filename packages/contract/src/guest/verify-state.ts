import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { DurationMs, WindowId } from './common.js';
import { ElementRole, ElementState } from './element.js';

export const VERIFY_MAX_PREDICATES = 8;
export const VERIFY_MAX_TIMEOUT_MS = 60_000;

const nonEmpty = text().min(1).max(4096);

/**
 * ElementSelector matches live elements of the window on every field given (all must hold).
 * `value`/`value_contains` never match a secure field: a predicate that could only be decided by
 * comparing a password is `unknown` (`secure_field`), so verify_state cannot become an oracle
 * for guessing one.
 */
export const ElementSelector = named(
  'GuestElementSelector',
  z
    .strictObject({
      role: ElementRole.optional(),
      name: nonEmpty.optional(),
      name_contains: nonEmpty.optional(),
      value: text().max(65_536).optional(),
      value_contains: nonEmpty.optional(),
      /** States that must all be set, e.g. `["checked"]`. */
      states: z.array(ElementState).min(1).max(16).optional(),
      /** States that must all be clear, e.g. `["sensitive"]` for a disabled element. */
      states_clear: z.array(ElementState).min(1).max(16).optional(),
    })
    .refine((s) => Object.values(s).some((v) => v !== undefined), {
      message: 'a selector needs at least one field',
    })
    .meta({ minProperties: 1 }),
);
export type ElementSelector = z.infer<typeof ElementSelector>;

/**
 * StatePredicate is one condition on the window:
 * - `element_exists`: at least one element matches (exactly one with `unique`; more is `unknown`
 *   with `ambiguous_match`, since the caller meant one element and cannot know which matched);
 * - `element_absent`: no element matches; only provable on a completely read tree;
 * - `window_title`: the title equals `equals` or contains `contains`.
 */
export const StatePredicate = named(
  'GuestStatePredicate',
  z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('element_exists'),
      selector: ElementSelector,
      unique: z.boolean().default(false),
    }),
    z.strictObject({ kind: z.literal('element_absent'), selector: ElementSelector }),
    z.strictObject({
      kind: z.literal('window_title'),
      match: z.discriminatedUnion('mode', [
        z.strictObject({ mode: z.literal('equals'), title: text().max(4096) }),
        z.strictObject({ mode: z.literal('contains'), title: nonEmpty }),
      ]),
    }),
  ]),
);
export type StatePredicate = z.infer<typeof StatePredicate>;

/**
 * VerifyStateRequest checks 1–8 predicates against the live window, sampling until all hold on
 * `stable_samples` consecutive samples or `timeout_ms` passes. It takes no snapshot and so never
 * invalidates the caller's tokens.
 */
export const VerifyStateRequest = named(
  'GuestVerifyStateRequest',
  z.strictObject({
    window_id: WindowId,
    predicates: z.array(StatePredicate).min(1).max(VERIFY_MAX_PREDICATES),
    /** Consecutive samples that must agree, so a value that flickers through is not "satisfied". */
    stable_samples: z.int().min(1).max(10).default(1),
    sample_interval_ms: z.int().min(10).max(5_000).default(100),
    /** With 0 the driver takes `stable_samples` samples once and answers, without waiting for a change. */
    timeout_ms: z.int().min(0).max(VERIFY_MAX_TIMEOUT_MS).default(2_000),
  }),
);
export type VerifyStateRequest = z.infer<typeof VerifyStateRequest>;

/**
 * UnknownReason says why a predicate could be decided neither way:
 * - `ambiguous_match`: several elements match where the predicate meant one;
 * - `unobservable`: the window's tree cannot be read (no bridge, bus down, properties unreadable);
 * - `tree_incomplete`: the tree could not be read completely, so an absence is not proven;
 * - `insufficient_stable_samples`: the answer kept changing until the timeout;
 * - `secure_field`: deciding would need a secure field's value;
 * - `window_gone`: the window disappeared while sampling.
 */
export const UnknownReason = named(
  'GuestUnknownReason',
  z.enum([
    'ambiguous_match',
    'unobservable',
    'tree_incomplete',
    'insufficient_stable_samples',
    'secure_field',
    'window_gone',
  ]),
);
export type UnknownReason = z.infer<typeof UnknownReason>;

const predicateFields = {
  /** Position of the predicate in the request. */
  index: z
    .int()
    .min(0)
    .max(VERIFY_MAX_PREDICATES - 1),
  /** Elements matching the selector on the last sample (element predicates). */
  match_count: z.int().min(0).optional(),
  /** The window title on the last sample (title predicates). */
  observed_title: z.string().max(4096).optional(),
};

/** PredicateResult is the last sample's verdict on one predicate; `unknown` always says why. */
export const PredicateResult = named(
  'GuestPredicateResult',
  z.discriminatedUnion('status', [
    z.strictObject({ ...predicateFields, status: z.literal('satisfied') }),
    z.strictObject({ ...predicateFields, status: z.literal('unsatisfied') }),
    z.strictObject({
      ...predicateFields,
      status: z.literal('unknown'),
      unknown_reason: UnknownReason,
    }),
  ]),
);
export type PredicateResult = z.infer<typeof PredicateResult>;

const resultFields = {
  predicates: z.array(PredicateResult).min(1).max(VERIFY_MAX_PREDICATES),
  samples: z.int().min(1),
  duration_ms: DurationMs,
};

/**
 * VerifyStateResponse: `satisfied` when every predicate held on `stable_samples` consecutive
 * samples; `unsatisfied` when one was decided false; `unknown` otherwise, with the reason that
 * decided it. `unknown` is neither success nor failure: observe before acting on it.
 */
export const VerifyStateResponse = named(
  'GuestVerifyStateResponse',
  z.discriminatedUnion('status', [
    z.strictObject({ ...resultFields, status: z.literal('satisfied') }),
    z.strictObject({ ...resultFields, status: z.literal('unsatisfied') }),
    z.strictObject({
      ...resultFields,
      status: z.literal('unknown'),
      unknown_reason: UnknownReason,
    }),
  ]),
);
export type VerifyStateResponse = z.infer<typeof VerifyStateResponse>;

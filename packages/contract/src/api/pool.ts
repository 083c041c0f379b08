import { z } from 'zod';
import { named } from '../registry.js';
import { crossFieldRules } from '../rules.js';
import { text } from '../text.js';
import { EgressPolicy } from './egress.js';
import { PoolId, ResourceName, Timestamp } from './common.js';
import { PoolPrime } from './pool-prime.js';
import { PoolRecording, PoolRecordingView } from './recording.js';
import { ProfilePath } from './profile.js';

export const Backend = named('Backend', z.enum(['local', 'kubernetes', 'kubevirt']));
export type Backend = z.infer<typeof Backend>;

/** Autoscaling keeps between `min` and `max` sandboxes; `initial` warm ones are made on create. */
export const Autoscaling = named(
  'Autoscaling',
  z
    .strictObject({
      min: z.number().int().min(0).max(1000),
      initial: z.number().int().min(0).max(1000),
      max: z.number().int().min(1).max(1000),
    })
    .refine((a) => a.min <= a.initial && a.initial <= a.max, {
      message: 'must satisfy min ≤ initial ≤ max',
      path: ['initial'],
    })
    .meta(
      crossFieldRules(
        'min ≤ initial ≤ max.',
        { rule: 'less_or_equal', left: 'min', right: 'initial' },
        { rule: 'less_or_equal', left: 'initial', right: 'max' },
      ),
    ),
);
export type Autoscaling = z.infer<typeof Autoscaling>;

/** Non-secret environment for every sandbox of the pool; secrets travel per claim instead. */
export const PoolEnv = named(
  'PoolEnv',
  z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name'),
      text().max(4096),
    )
    .refine((e) => Object.keys(e).length <= 64, 'at most 64 variables')
    .meta({ maxProperties: 64 }),
);

// Kubernetes label keys (optional DNS prefix + name) and values, as the API server checks them.
const LabelKey = z
  .string()
  .max(316)
  .regex(
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    'a Kubernetes label key',
  );
const LabelValue = z
  .string()
  .regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/, 'a Kubernetes label value');

/** A Pod toleration (Kubernetes' fields in snake_case). */
export const PoolToleration = named(
  'PoolToleration',
  z
    .strictObject({
      key: LabelKey.optional(),
      operator: z.enum(['Exists', 'Equal']).default('Equal'),
      value: LabelValue.optional(),
      effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
      /** Only with effect NoExecute: how long the sandbox stays on a tainted node. */
      toleration_seconds: z.number().int().min(0).optional(),
    })
    .refine((t) => !(t.operator === 'Exists' && t.value !== undefined), {
      message: 'operator Exists takes no value',
      path: ['value'],
    })
    .meta({
      description: 'operator Exists takes no value.',
      not: { properties: { operator: { const: 'Exists' } }, required: ['operator', 'value'] },
    }),
);

/**
 * Where a pool's sandboxes run on the `kubernetes` and `kubevirt` backends (the local backend
 * ignores it). A runtime class isolates Pods further, e.g. `gvisor`; VMs do not use one.
 */
export const PoolKubernetes = named(
  'PoolKubernetes',
  z.strictObject({
    runtime_class_name: z
      .string()
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a RuntimeClass name')
      .optional(),
    node_selector: z
      .record(LabelKey, LabelValue)
      .refine((m) => Object.keys(m).length <= 32, 'at most 32 labels')
      .meta({ maxProperties: 32 })
      .optional(),
    tolerations: z.array(PoolToleration).max(32).optional(),
  }),
);
export type PoolKubernetes = z.infer<typeof PoolKubernetes>;

const DAY = 86_400;

const PoolSpecShape = {
  image: text().min(1).max(512),
  backend: Backend.default('local'),
  /** CPU cores per sandbox (fractions allowed, as Kubernetes millicores). */
  cpu: z.number().positive().max(64).multipleOf(0.001).default(1),
  memory_mb: z.number().int().min(256).max(262_144).default(2048),
  autoscaling: Autoscaling.default({ min: 0, initial: 1, max: 5 }),
  claim_ttl_seconds: z
    .number()
    .int()
    .min(1)
    .max(7 * DAY)
    .default(900),
  max_claim_lifetime_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * DAY)
    .default(DAY),
  /** Heartbeat window: a claim with no heartbeat for this long is reclaimed. null disables it. */
  idle_timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(7 * DAY)
    .nullable()
    .default(null),
  /**
   * Auto-pause: a claim with no driving call, viewer connection or run for this many seconds is
   * paused (its desktop frozen, no CPU) until its next call; null never pauses. Paused time does
   * not count toward the TTL or the idle timeout, only the maximum lifetime. Backends that cannot
   * pause (kubernetes) ignore it.
   */
  idle_pause_seconds: z
    .number()
    .int()
    .min(1)
    .max(7 * DAY)
    .nullable()
    .default(null),
  env: PoolEnv.default({}),
  kubernetes: PoolKubernetes.nullable().default(null),
  /**
   * Where the pool's sandboxes may connect (`none` | `allowlist` | `open` with allow and deny
   * rules). null follows the installation default (`none` unless the operator changed it).
   * Changes apply to running sandboxes within a second; they never roll warm sandboxes.
   */
  egress: EgressPolicy.nullable().default(null),
  /** Apps every warm desktop has open before it is handed out (PoolPrime); null primes nothing. */
  prime: PoolPrime.nullable().default(null),
  /**
   * Video recording of claims (PoolRecording): null offers none; `video: true` records every
   * claim, `video: false` only claims that ask. Never rolls desktops.
   */
  recording: PoolRecording.nullable().default(null),
  /**
   * Paths of the desktop user's home that claims with a `profile` keep (relative to the home);
   * null keeps DEFAULT_PROFILE_PATHS (Chromium and Firefox profiles, Documents, Desktop, shell
   * history). Never rolls desktops.
   */
  profile_paths: z.array(ProfilePath).min(1).max(32).nullable().default(null),
};

/**
 * PoolSpec is the body of `PUT /v1/pools/{name}`: the whole desired state, so applying the same
 * spec twice changes nothing (Terraform owns pools this way).
 */
export const PoolSpec = named(
  'PoolSpec',
  z
    .strictObject(PoolSpecShape)
    .refine((p) => p.claim_ttl_seconds <= p.max_claim_lifetime_seconds, {
      message: 'claim_ttl_seconds must not exceed max_claim_lifetime_seconds',
      path: ['claim_ttl_seconds'],
    })
    .meta(
      crossFieldRules('claim_ttl_seconds ≤ max_claim_lifetime_seconds.', {
        rule: 'less_or_equal',
        left: 'claim_ttl_seconds',
        right: 'max_claim_lifetime_seconds',
      }),
    ),
);
export type PoolSpec = z.infer<typeof PoolSpec>;
export type PoolSpecInput = z.input<typeof PoolSpec>;

export const PoolState = named('PoolState', z.enum(['active', 'draining']));

export const PoolCounts = named(
  'PoolCounts',
  z.strictObject({
    provisioning: z.number().int().min(0),
    warm: z.number().int().min(0),
    claimed: z.number().int().min(0),
    releasing: z.number().int().min(0),
    failed: z.number().int().min(0),
  }),
);
export type PoolCounts = z.infer<typeof PoolCounts>;

export const Pool = named(
  'Pool',
  z.strictObject({
    id: PoolId,
    name: ResourceName,
    image: z.string(),
    backend: Backend,
    cpu: z.number(),
    memory_mb: z.number().int(),
    autoscaling: z.strictObject({
      min: z.number().int(),
      initial: z.number().int(),
      max: z.number().int(),
    }),
    claim_ttl_seconds: z.number().int(),
    max_claim_lifetime_seconds: z.number().int(),
    idle_timeout_seconds: z.number().int().nullable(),
    /** Auto-pause after this many seconds without a driving call, viewer or run; null never. */
    idle_pause_seconds: z.number().int().nullable(),
    env: z.record(z.string(), z.string()),
    kubernetes: PoolKubernetes.nullable(),
    /** The pool's egress policy; null follows the installation default. */
    egress: EgressPolicy.nullable(),
    prime: PoolPrime.nullable(),
    /** Recording settings with their measured cost per recorded desktop; null offers none. */
    recording: PoolRecordingView.nullable(),
    /** Home paths its claims' profiles keep; null: DEFAULT_PROFILE_PATHS. */
    profile_paths: z.array(ProfilePath).nullable(),
    state: PoolState,
    /** Bumped when the sandbox template (image, resources, env, kubernetes placement, prime) changes, or egress moves between `none` and a mode with network (local desktops get their link at provisioning); warm sandboxes of older generations are rolled. */
    generation: z.number().int().min(1),
    counts: PoolCounts,
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export type Pool = z.infer<typeof Pool>;

export const PoolPathParams = z.strictObject({ name: ResourceName });

import { envVars, loadEnv } from '@cubicle/config';
import { checkObjectStoreEnv, egressEnvFields, objectStoreEnvFields } from '@cubicle/control-plane';
import { parseViewerKeys } from '@cubicle/viewer';
import { z } from 'zod';
import { withViewerKeysFromPem } from './viewer-key-pem.js';

const isViewerKeySet = (value: string) => {
  try {
    parseViewerKeys(value);
    return true;
  } catch {
    return false;
  }
};

const isLoopback = (host: string) =>
  host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** ApiEnv is everything the API process reads from its environment, parsed once at start. */
const ApiEnvFields = z.object({
  NODE_ENV: envVars.nodeEnv(),
  API_HOST: envVars.host('127.0.0.1'),
  API_PORT: envVars.port(8080),
  DATABASE_URL: envVars.databaseUrl(),
  REDIS_URL: envVars.redisUrl(),
  LOG_LEVEL: envVars.logLevel(),
  /** BullMQ key prefix; must match the worker's. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9:_-]{1,80}$/)
    .default('cubicle'),
  /**
   * Ed25519 keys that sign viewer tickets, as a JWK set `{"keys":[{kty:"OKP",crv:"Ed25519",x,d,kid}]}`.
   * The first key signs, every key verifies (rotate by prepending a new key). Unset: a key is
   * made at start-up, so tickets die with the process and other replicas reject them.
   */
  CUBICLE_VIEWER_KEYS: z
    .string()
    .refine(isViewerKeySet, 'must be a JWK set of Ed25519 keys; the first with its private part d')
    .optional(),
  /**
   * Prometheus metrics (`GET /metrics`) on a listener of their own, never on the public API: the
   * series name tenants and pools. Unset: no metrics listener; 0 picks a free port.
   */
  API_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  API_METRICS_HOST: envVars.host('127.0.0.1'),
  /** Bearer token scrapes must send; required when API_METRICS_HOST is not loopback. */
  API_METRICS_TOKEN: z.string().min(16).optional(),
  /** Public URL of the web app; viewer_url is `<this>/embed/<ticket>`. */
  CUBICLE_WEB_URL: z.url().default('http://127.0.0.1:3000'),
  /** Public URL of this API as browsers reach it (for the viewer's stream_url); default: the request's host. */
  CUBICLE_PUBLIC_API_URL: z.url().optional(),
  /** Concurrent viewer streams per ticket and per tenant, across every API replica sharing the Redis. */
  VIEWER_MAX_STREAMS_PER_TICKET: z.coerce.number().int().min(1).max(1000).default(5),
  VIEWER_MAX_STREAMS_PER_TENANT: z.coerce.number().int().min(1).max(100_000).default(100),
  /**
   * `id:base64key[,id:base64key…]`, the worker's keyring: seals webhook signing secrets (the
   * worker opens them to sign) and claim/stored secrets (envelope encryption: each value's
   * data key is wrapped by the first key). Required: without it the API would start without
   * its secret and webhook routes.
   */
  CUBICLE_KEYRING: z.string().min(1, 'must hold at least one key (id:base64key)'),
  /**
   * Operator setting: webhook endpoints may be private, loopback or link-local addresses
   * (on-premise receivers, tests). Off: such URLs are refused with `webhook_url_refused`.
   */
  CUBICLE_WEBHOOKS_ALLOW_PRIVATE: envVars.boolean(false),
  /** Operator egress settings (default `none`; ranges opened in the floor): egressEnvFields. */
  ...egressEnvFields,
  /** The object store (CUBICLE_OBJECT_STORE fs|s3, CUBICLE_S3_*): the worker's, the same one. */
  ...objectStoreEnvFields,
});

/** The metrics listener names tenants: bound beyond loopback, it takes a token. */
export const ApiEnv = ApiEnvFields.refine(
  (env) =>
    env.API_METRICS_PORT === undefined ||
    env.API_METRICS_TOKEN !== undefined ||
    isLoopback(env.API_METRICS_HOST),
  {
    message: 'API_METRICS_TOKEN is required when API_METRICS_HOST is not a loopback address',
    path: ['API_METRICS_TOKEN'],
  },
).superRefine(checkObjectStoreEnv);
export type ApiEnv = z.infer<typeof ApiEnv>;

export function loadApiEnv(source: Record<string, string | undefined> = process.env): ApiEnv {
  // The chart gives the viewer key as PEM (CUBICLE_VIEWER_KEY_PEM); derive the JWK set from it.
  return loadEnv('cubicle-api', ApiEnv, withViewerKeysFromPem(source));
}

import { createObjectStore, type ObjectStore, type ObjectStoreConfig } from '@cubicle/object-store';
import { resolve } from 'node:path';
import { z } from 'zod';

const flag = z
  .enum(['0', '1', 'true', 'false'])
  .default('1')
  .transform((v) => v === '1' || v === 'true');

/**
 * objectStoreEnvFields are the object store's variables, the same in the API and the worker (each
 * process's env.ts spreads them into its schema; objectStoreConfigOf turns them into a config).
 * Both processes must name the same store: the worker writes what the API reads.
 */
export const objectStoreEnvFields = {
  /** `fs` (default: files under CUBICLE_OBJECT_STORE_DIR) or `s3` (the CUBICLE_S3_* bucket). */
  CUBICLE_OBJECT_STORE: z.enum(['fs', 's3']).default('fs'),
  /** The fs store's directory; default `.cubicle/objects` under the working directory (`npm start` passes its data dir's). */
  CUBICLE_OBJECT_STORE_DIR: z.string().min(1).default('.cubicle/objects'),
  /** The S3 API's endpoint (MinIO, versitygw, R2…); unset: AWS's for the region. */
  CUBICLE_S3_ENDPOINT: z.url().optional(),
  CUBICLE_S3_REGION: z.string().min(1).default('us-east-1'),
  CUBICLE_S3_BUCKET: z.string().min(3).max(63).optional(),
  /** Credentials (never logged: the processes' log hooks redact them by name). */
  CUBICLE_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  CUBICLE_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Path-style URLs (`endpoint/bucket/key`): what most self-hosted servers need. Default on. */
  CUBICLE_S3_FORCE_PATH_STYLE: flag,
};

type ObjectStoreEnv = z.infer<z.ZodObject<typeof objectStoreEnvFields>>;

/** objectStoreEnvIssues names what an `s3` store is missing (bucket, credentials); empty when whole. */
export function objectStoreEnvIssues(env: ObjectStoreEnv): string[] {
  if (env.CUBICLE_OBJECT_STORE !== 's3') return [];
  const required = [
    'CUBICLE_S3_BUCKET',
    'CUBICLE_S3_ACCESS_KEY_ID',
    'CUBICLE_S3_SECRET_ACCESS_KEY',
  ] as const;
  return required.filter((name) => env[name] === undefined);
}

/**
 * checkObjectStoreEnv is the env.ts schemas' superRefine: with CUBICLE_OBJECT_STORE=s3 the process
 * stops at start-up naming each missing variable, as for any other bad variable.
 */
export function checkObjectStoreEnv(env: ObjectStoreEnv, ctx: z.RefinementCtx): void {
  for (const name of objectStoreEnvIssues(env))
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: 'required when CUBICLE_OBJECT_STORE=s3',
    });
}

/** objectStoreConfigOf turns parsed objectStoreEnvFields into createObjectStore's config. */
export function objectStoreConfigOf(env: ObjectStoreEnv): ObjectStoreConfig {
  if (env.CUBICLE_OBJECT_STORE === 'fs') {
    return { kind: 'fs', root: resolve(env.CUBICLE_OBJECT_STORE_DIR) };
  }
  const missing = objectStoreEnvIssues(env);
  if (missing.length > 0) throw new Error(`CUBICLE_OBJECT_STORE=s3 needs ${missing.join(', ')}`);
  return {
    kind: 's3',
    endpoint: env.CUBICLE_S3_ENDPOINT,
    region: env.CUBICLE_S3_REGION,
    bucket: env.CUBICLE_S3_BUCKET!,
    accessKeyId: env.CUBICLE_S3_ACCESS_KEY_ID!,
    secretAccessKey: env.CUBICLE_S3_SECRET_ACCESS_KEY!,
    forcePathStyle: env.CUBICLE_S3_FORCE_PATH_STYLE,
  };
}

/** objectStoreOf makes the store the env names (API and worker: createResources' `objectStore`). */
export const objectStoreOf = (env: ObjectStoreEnv): ObjectStore =>
  createObjectStore(objectStoreConfigOf(env));

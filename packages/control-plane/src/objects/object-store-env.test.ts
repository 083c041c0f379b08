import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checkObjectStoreEnv,
  objectStoreConfigOf,
  objectStoreEnvFields,
} from './object-store-env.js';

const Env = z.object(objectStoreEnvFields).superRefine(checkObjectStoreEnv);

describe('object store settings', () => {
  it('default: files under .cubicle/objects of the working directory', () => {
    expect(objectStoreConfigOf(Env.parse({}))).toEqual({
      kind: 'fs',
      root: resolve('.cubicle/objects'),
    });
    expect(objectStoreConfigOf(Env.parse({ CUBICLE_OBJECT_STORE_DIR: '/srv/objects' }))).toEqual({
      kind: 'fs',
      root: '/srv/objects',
    });
  });

  it('s3: every setting from the environment, path style on unless turned off', () => {
    const env = {
      CUBICLE_OBJECT_STORE: 's3',
      CUBICLE_S3_ENDPOINT: 'http://127.0.0.1:7070',
      CUBICLE_S3_BUCKET: 'cubicle',
      CUBICLE_S3_ACCESS_KEY_ID: 'AKID',
      CUBICLE_S3_SECRET_ACCESS_KEY: 'SECRET',
    };
    expect(objectStoreConfigOf(Env.parse(env))).toEqual({
      kind: 's3',
      endpoint: 'http://127.0.0.1:7070',
      region: 'us-east-1',
      bucket: 'cubicle',
      accessKeyId: 'AKID',
      secretAccessKey: 'SECRET',
      forcePathStyle: true,
    });
    const virtualHost = Env.parse({
      ...env,
      CUBICLE_S3_FORCE_PATH_STYLE: '0',
      CUBICLE_S3_REGION: 'eu-west-1',
    });
    expect(objectStoreConfigOf(virtualHost)).toMatchObject({
      forcePathStyle: false,
      region: 'eu-west-1',
    });
  });

  it('s3 without bucket or credentials names each missing variable; bad values are refused', () => {
    const result = Env.safeParse({ CUBICLE_OBJECT_STORE: 's3' });
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path.join('.')).sort()).toEqual([
      'CUBICLE_S3_ACCESS_KEY_ID',
      'CUBICLE_S3_BUCKET',
      'CUBICLE_S3_SECRET_ACCESS_KEY',
    ]);
    expect(Env.safeParse({ CUBICLE_OBJECT_STORE: 'gcs' }).success).toBe(false);
    expect(Env.safeParse({ CUBICLE_S3_ENDPOINT: 'not a url' }).success).toBe(false);
    expect(Env.safeParse({ CUBICLE_S3_FORCE_PATH_STYLE: 'yes' }).success).toBe(false);
  });
});

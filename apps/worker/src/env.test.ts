import { parseEnv } from '@cubicle/config';
import { describe, expect, it } from 'vitest';
import { WorkerEnv } from './env.js';

describe('worker env', () => {
  it('parses defaults and rejects a bad prefix by name', () => {
    const env = parseEnv(WorkerEnv, {
      DATABASE_URL: 'postgresql://h/db',
      REDIS_URL: 'unix:///tmp/r.sock',
    });
    expect(env).toMatchObject({ QUEUE_PREFIX: 'cubicle', WORKER_CONCURRENCY: 8 });
    expect(() =>
      parseEnv(WorkerEnv, {
        DATABASE_URL: 'postgresql://h/db',
        REDIS_URL: 'redis://h',
        QUEUE_PREFIX: 'A B',
      }),
    ).toThrow(/QUEUE_PREFIX/);
  });
});

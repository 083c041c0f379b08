// What the global setup hands to test files through Vitest's provide/inject.
import type { S3Endpoint } from './s3-server.js';

/** Per-file databases of a run are named with this prefix; teardown on a shared server drops them. */
export const databasePrefix = (runId: string) => `cubicle_test_${runId}_`;
/** Redis keys of a run start with this; teardown on a shared server deletes them. */
export const redisPrefix = (runId: string) => `cubicle:test:${runId}:`;

export interface HarnessContext {
  /** Short id of this test run; per-file databases and Redis namespaces carry it in their names. */
  runId: string;
  postgres: {
    /** A URL with rights to CREATE DATABASE (a superuser on the private server). */
    adminUrl: string;
    /** The database every per-file database is copied from: all migrations applied. */
    templateDatabase: string;
    /** Migrations applied to the template, in order (empty while packages/db has none). */
    migrations: string[];
    /** True when DATABASE_URL pointed the harness at an existing server. */
    isExternal: boolean;
  };
  redis: {
    url: string;
    isExternal: boolean;
  };
  /**
   * The run's S3-compatible server (versitygw, test/harness/s3-server.ts), or why there is none
   * (its binary is not built); read it with harnessS3() from test/harness/index.ts.
   */
  s3: S3Endpoint | { missing: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    cubicle: HarnessContext;
  }
}

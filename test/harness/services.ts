// The services behind integration and e2e tests: private PostgreSQL and Redis in a temp dir
// (unless DATABASE_URL / REDIS_URL name existing ones), plus the migrated template database.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  isRunning,
  processStartTime,
  startPostgres,
  startReaper,
  startRedis,
  stopPostgresAt,
  stopRedisAt,
  type PostgresServer,
  type RedisServer,
} from '../../packages/embedded/src/index.js';
import { databasePrefix, redisPrefix, type HarnessContext } from './context.js';
import { createTemplate, dropDatabases } from './postgres-admin.js';
import { deleteKeysWithPrefix } from './redis-keys.js';
import { endpointOf, requireVersitygw, startS3Server, type S3Server } from './s3-server.js';

const RUN_DIR_PREFIX = 'cubicle-test-';

export interface HarnessServices {
  context: HarnessContext;
  stop(): Promise<void>;
}

const log = (line: string) => console.log(`[harness] ${line}`);

/**
 * reapStaleRuns cleans up after harness runs whose process died without teardown and whose
 * reaper died too (the whole tree was killed): it stops their servers by pid file and deletes
 * their directories. Runs whose owner is alive are left alone.
 */
async function reapStaleRuns(): Promise<void> {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(RUN_DIR_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    try {
      const owner = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as {
        pid: number;
        startTime?: string;
      };
      if (isRunning(owner.pid, owner.startTime)) continue;
    } catch {
      // No owner file: a run that died while starting, unless it is starting right now.
      if (Date.now() - statSync(dir).mtimeMs < 60_000) continue;
    }
    await stopPostgresAt(join(dir, 'postgres'), log);
    await stopRedisAt(join(dir, 'redis'), log);
    rmSync(dir, { recursive: true, force: true });
    log(`removed the leftovers of a dead run: ${dir}`);
  }
}

/** startHarnessServices starts what DATABASE_URL / REDIS_URL do not provide and builds the template. */
export async function startHarnessServices(): Promise<HarnessServices> {
  const started = Date.now();
  const runId = randomBytes(3).toString('hex');
  await reapStaleRuns();
  const runDir = mkdtempSync(join(tmpdir(), RUN_DIR_PREFIX));
  // The postgres user must be able to pass through to its data dir (mkdtemp makes 0700).
  chmodSync(runDir, 0o711);
  writeFileSync(
    join(runDir, 'owner.json'),
    JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid) }),
  );
  // If Vitest dies without teardown (it exits 1 ms after Ctrl-C), the reaper stops our servers.
  const reaper = startReaper();
  reaper.removeOnExit(runDir);

  let postgres: PostgresServer | undefined;
  let redis: RedisServer | undefined;
  let s3: S3Server | undefined;
  const stopServers = async () => {
    // Stop them all even if one fails; the reaper is the last resort for whatever still runs.
    const results = await Promise.allSettled([redis?.stop(), postgres?.stop(), s3?.stop()]);
    if (postgres && postgres.dataDir !== join(runDir, 'postgres')) {
      rmSync(postgres.dataDir, { recursive: true, force: true });
    }
    rmSync(runDir, { recursive: true, force: true });
    reaper.close();
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  };

  try {
    const externalDatabaseUrl = process.env.DATABASE_URL;
    const externalRedisUrl = process.env.REDIS_URL;
    if (!externalDatabaseUrl) {
      postgres = await startPostgres({ dataDir: join(runDir, 'postgres'), isDurable: false, log });
      reaper.watch(postgres);
      if (postgres.dataDir !== join(runDir, 'postgres')) reaper.removeOnExit(postgres.dataDir);
    }
    if (!externalRedisUrl) {
      redis = await startRedis({ dir: join(runDir, 'redis'), log });
      reaper.watch(redis);
    }
    // The object store's S3 suites run against it; without the binary they fail saying how to build it.
    let s3Missing = '';
    try {
      requireVersitygw();
      s3 = await startS3Server({ dir: join(runDir, 's3'), log });
      reaper.watch(s3);
    } catch (error) {
      s3Missing = error instanceof Error ? error.message : String(error);
      log(`no S3 server: ${s3Missing}`);
    }
    const adminUrl = externalDatabaseUrl ?? postgres?.adminUrl ?? '';
    const redisUrl = externalRedisUrl ?? redis?.url ?? '';
    // On a shared server the template is this run's own, and dropped at the end.
    const templateDatabase = externalDatabaseUrl
      ? `${databasePrefix(runId)}template`
      : 'cubicle_template';
    const migrations = await createTemplate(adminUrl, templateDatabase, log);
    log(
      `ready in ${Date.now() - started} ms: template ${templateDatabase} with ` +
        `${migrations.length} migration(s); postgres ${externalDatabaseUrl ? 'from DATABASE_URL' : 'private'}, ` +
        `redis ${externalRedisUrl ? 'from REDIS_URL' : 'private'}`,
    );
    const context: HarnessContext = {
      runId,
      postgres: {
        adminUrl,
        templateDatabase,
        migrations,
        isExternal: Boolean(externalDatabaseUrl),
      },
      redis: { url: redisUrl, isExternal: Boolean(externalRedisUrl) },
      s3: s3 ? endpointOf(s3) : { missing: s3Missing },
    };
    return {
      context,
      stop: async () => {
        // Private servers vanish with their data; shared ones get this run's leftovers removed.
        if (context.postgres.isExternal) await dropDatabases(adminUrl, databasePrefix(runId));
        if (context.redis.isExternal)
          await deleteKeysWithPrefix(context.redis.url, redisPrefix(runId));
        await stopServers();
        log('stopped');
      },
    };
  } catch (error) {
    await stopServers();
    throw error;
  }
}

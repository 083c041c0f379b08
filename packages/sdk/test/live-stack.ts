// The live Cubicle of the SDK's suites: the benchmarks' stack (scripts/bench/lib/stack.mjs) from
// the built packages: private PostgreSQL and Redis, migrations, the worker with the local backend
// (real desktops) and the API as its own process on a loopback port.
// @ts-expect-error: a plain .mjs module without types
import { startStack } from '../../../scripts/bench/lib/stack.mjs';

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export interface LiveStack {
  url: string;
  /** The tenant's admin key (`cbk_…`). */
  apiKey: string;
  /**
   * startApi starts one more API process of this stack (same database, Redis and keyring) on
   * `port`, for tests that kill it: `kill()` is SIGKILL, by pid, and waits for the exit.
   */
  startApi(
    port: number,
    baseEnv: Record<string, string>,
  ): Promise<{ url: string; kill(): Promise<void> }>;
  /** limitedKey makes an admin key of a new tenant allowed `requestsPerMinute` requests. */
  limitedKey(requestsPerMinute: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startLiveStack(): Promise<LiveStack> {
  const stack = (await startStack({ tenantName: 'sdk', reclaimIntervalMs: 500 })) as {
    url: string;
    adminKey: { key: string };
    databaseUrl: string;
    redisUrl: string;
    keyring: string;
    db: unknown;
    stop(): Promise<void>;
  };
  const started = new Set<() => Promise<void>>();
  const startApi = async (port: number, baseEnv: Record<string, string>) => {
    const main = fileURLToPath(new URL('../../../apps/api/dist/main.js', import.meta.url));
    const child = spawn(process.execPath, [main], {
      env: {
        ...baseEnv,
        DATABASE_URL: stack.databaseUrl,
        REDIS_URL: stack.redisUrl,
        CUBICLE_KEYRING: stack.keyring,
        LOG_LEVEL: 'warn',
        API_HOST: '127.0.0.1',
        API_PORT: String(port),
      },
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    const kill = async () => {
      started.delete(kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    };
    started.add(kill);
    for (const deadline = Date.now() + 30_000; ;) {
      if ((await fetch(`${url}/healthz`).catch(() => null))?.ok) return { url, kill };
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error('the extra API did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const limitedKey = async (requestsPerMinute: number) => {
    const tenancy = (await import(
      new URL('../../../packages/tenancy/dist/index.js', import.meta.url).href
    )) as {
      createTenant(db: unknown, input: object): Promise<{ id: string }>;
      createApiKey(db: unknown, input: object): Promise<{ key: string }>;
    };
    const tenant = await tenancy.createTenant(stack.db, {
      name: `limited-${requestsPerMinute}`,
      quotas: { requests_per_minute: requestsPerMinute },
    });
    const key = await tenancy.createApiKey(stack.db, {
      tenantId: tenant.id,
      name: 'limited',
      role: 'admin',
    });
    return key.key;
  };
  return {
    url: stack.url,
    apiKey: stack.adminKey.key,
    startApi,
    limitedKey,
    stop: async () => {
      for (const kill of started) await kill();
      await stack.stop();
    },
  };
}

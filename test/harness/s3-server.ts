// A real S3-compatible server for the object store's tests: versitygw (posix back end), built from
// the Go module proxy by scripts/lib/s3-tools.mjs into the tools cache. Each server listens on a
// free loopback port with a private data directory (a bucket is a directory there, each object a
// plain file, so a test can grep what the server stored) and is stopped by its pid.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunning, processStartTime } from '../../packages/embedded/src/index.js';
import { VERSITYGW_VERSION, versitygwPath } from '../../scripts/lib/s3-tools.mjs';

/** What a test needs to reach the server (the harness context carries it, JSON-safe). */
export interface S3Endpoint {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where the server keeps the bucket's objects as files: `<dataDir>/<bucket>/<key>`. */
  dataDir: string;
}

export interface S3Server extends S3Endpoint {
  pid: number;
  startTime: string | undefined;
  stopSignal: NodeJS.Signals;
  isGroupLeader: true;
  /** Stops the server (SIGTERM to its group, SIGKILL after 5 s); idempotent. Its data stays. */
  stop(): Promise<void>;
}

/** requireVersitygw returns the cached binary, or fails with how to build it (never skips). */
export function requireVersitygw(): string {
  const bin = versitygwPath();
  if (!existsSync(bin))
    throw new Error(
      `versitygw ${VERSITYGW_VERSION} is not built: ${bin} is missing. \`npm test\` builds it during ` +
        'its bootstrap; to build it alone run `node scripts/lib/s3-tools.mjs` (≈ 4 min the first time).',
    );
  return bin;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export interface StartS3Options {
  /** Private directory: `data/` holds the bucket, `versitygw.log` the server's output. */
  dir: string;
  bucket?: string;
  /** Reuse a port (a restart after an outage test); default: a free one. */
  port?: number;
  /** Reuse credentials (a restart); default: fresh random ones. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  log?: (line: string) => void;
}

/** startS3Server starts versitygw on loopback and resolves once it accepts connections (≤ 15 s). */
export async function startS3Server(options: StartS3Options): Promise<S3Server> {
  const bin = requireVersitygw();
  const bucket = options.bucket ?? 'cubicle-test';
  const dataDir = join(options.dir, 'data');
  // With the posix back end a bucket is a directory of the data dir: no CreateBucket call needed.
  mkdirSync(join(dataDir, bucket), { recursive: true, mode: 0o700 });
  const credentials = options.credentials ?? {
    accessKeyId: `cubicle${randomBytes(6).toString('hex')}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
  };
  const port = options.port ?? (await freePort());
  const out = openSync(join(options.dir, 'versitygw.log'), 'a');
  // Credentials go in the environment, not argv (ps shows argv to every user).
  const child = spawn(bin, ['--port', `127.0.0.1:${port}`, 'posix', dataDir], {
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ROOT_ACCESS_KEY_ID: credentials.accessKeyId,
      ROOT_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    } as unknown as NodeJS.ProcessEnv, // no NODE_ENV (Next.js's types call it required; the web typecheck reads this)
  });
  closeSync(out);
  child.unref();
  const pid = child.pid!;
  let exited = false;
  child.once('exit', () => (exited = true));
  const stop = async () => {
    if (exited || !isRunning(pid)) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return;
    }
    for (let i = 0; i < 200 && !exited && isRunning(pid); i += 1) await sleep(25);
    if (!exited && isRunning(pid)) process.kill(-pid, 'SIGKILL');
  };
  const deadline = Date.now() + 15_000;
  while (!(await accepts(port))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(
        `versitygw did not start on 127.0.0.1:${port} (see ${join(options.dir, 'versitygw.log')})`,
      );
    }
    await sleep(50);
  }
  options.log?.(
    `versitygw ${VERSITYGW_VERSION} on 127.0.0.1:${port} (pid ${pid}), data ${dataDir}`,
  );
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    bucket,
    ...credentials,
    dataDir,
    pid,
    startTime: processStartTime(pid),
    stopSignal: 'SIGTERM',
    isGroupLeader: true,
    stop,
  };
}

/** endpointOf keeps the JSON-safe part of a server (what the harness context carries). */
export const endpointOf = (server: S3Server): S3Endpoint => ({
  endpoint: server.endpoint,
  region: server.region,
  bucket: server.bucket,
  accessKeyId: server.accessKeyId,
  secretAccessKey: server.secretAccessKey,
  dataDir: server.dataDir,
});

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** cleanEnv drops unset values (spawn would pass them as the string "undefined"). */
export function cleanEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * spawnDetached starts a desktop component as the leader of its own session and process group
 * (setsid), so stopping the desktop can signal everything it forked by group id.
 */
export function spawnDetached(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  stdio: StdioOptions = 'ignore',
): ChildProcess {
  const child = spawn(command, args, { env: cleanEnv(env), detached: true, stdio });
  child.once('error', () => undefined); // reported through exit/waitFor, never thrown
  return child;
}

/** hasExited is true once the child exited or failed to spawn. */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
}

/** waitFor polls `check` until it is true, failing fast when `child` (if given) dies first. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  options: { timeoutMs?: number; intervalMs?: number; child?: ChildProcess } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (Date.now() < deadline) {
    if (await check()) return;
    if (options.child && hasExited(options.child)) {
      throw new Error(
        `${what}: the process exited (${options.child.exitCode ?? options.child.signalCode})`,
      );
    }
    await sleep(options.intervalMs ?? 20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** readFirstLine resolves with the first line a child prints on the given stream. */
export function readFirstLine(
  stream: NodeJS.ReadableStream,
  child: ChildProcess,
  what: string,
  timeoutMs = 10_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const newline = buffer.indexOf('\n');
      if (newline >= 0) finish(null, buffer.slice(0, newline).trim());
    };
    const onExit = () => finish(new Error(`${what}: the process exited before answering`));
    const finish = (err: Error | null, line?: string) => {
      clearTimeout(timer);
      stream.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(line ?? '');
    };
    stream.on('data', onData);
    child.once('exit', onExit);
  });
}

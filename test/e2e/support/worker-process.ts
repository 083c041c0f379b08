import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const workerMain = fileURLToPath(new URL('../../../apps/worker/dist/main.js', import.meta.url));

export interface WorkerProcess {
  pid: number;
  output(): string;
  /** SIGTERM and wait (graceful). */
  stop(): Promise<void>;
  /** SIGKILL the worker alone, as a crash would: its desktops (own sessions) live on. */
  kill9(): Promise<void>;
}

/** startWorker runs the built worker as a real process with the given environment. */
export function startWorker(env: Record<string, string>): WorkerProcess {
  const child: ChildProcess = spawn(process.execPath, [workerMain], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const exited = once(child, 'exit');
  return {
    pid: child.pid!,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

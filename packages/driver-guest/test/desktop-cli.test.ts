import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { isAlive } from './helpers/build-guest.js';

const cli = fileURLToPath(new URL('../dist/desktop/cli.js', import.meta.url));

function runCli(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const firstLine = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`cubicle-desktop exited ${code}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, firstLine, exited };
}

// Runs the built CLI, as `npm test` does after its build step.
it('cubicle-desktop start prints the session; stop --state-file ends all of it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cubicle-cli-'));
  const stateFile = join(dir, 'state.json');
  const start = runCli(['start', '--state-file', stateFile]);
  try {
    const session = JSON.parse(await start.firstLine) as {
      display: string;
      guestUrl: string;
      guestToken: string;
      pids: Record<string, number | null>;
    };
    expect(session.display).toMatch(/^:\d+$/);
    const health = await fetch(`${session.guestUrl}/healthz`);
    expect(((await health.json()) as { status: string }).status).toBe('ok');
    expect(existsSync(stateFile)).toBe(true);

    const stop = runCli(['stop', '--state-file', stateFile]);
    expect(JSON.parse(await stop.firstLine)).toMatchObject({ leftovers: [] });
    expect(await start.exited).toBe(0);
    for (const pid of Object.values(session.pids)) if (pid) expect(isAlive(pid)).toBe(false);
    expect(existsSync(stateFile)).toBe(false);
  } finally {
    if (start.child.exitCode === null) start.child.kill('SIGTERM');
    await start.exited;
    await rm(dir, { recursive: true, force: true });
  }
});

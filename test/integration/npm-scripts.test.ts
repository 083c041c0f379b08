import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as embedded from '@cubicle/embedded';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { spawnApp } from '../../scripts/lib/api-process.mjs';
import { loadTerminalFormat } from '../../scripts/lib/terminal-log.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cubicle npm scripts '));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rootScripts = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The README's commands run through npm, which forwards SIGINT and SIGTERM to its child only.
 * With the script as `sh -c "node …"`, the shell swallowed SIGINT (it waits for its child) and
 * died on SIGTERM, orphaning a running stack. Each script is checked with real npm: a probe in
 * place of scripts/cubicle.mjs must receive the signal sent to npm's own pid, and exit with it.
 */
describe('npm start / npm test and signals sent to the npm process', () => {
  for (const [script, signal] of [
    ['start', 'SIGINT'],
    ['start', 'SIGTERM'],
    ['test', 'SIGINT'],
  ] as const) {
    it(`npm ${script}: ${signal} to npm reaches the stack's supervisor`, async () => {
      const project = mkdtempSync(join(dir, `${script}-`));
      mkdirSync(join(project, 'scripts'));
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({
          name: 'probe',
          private: true,
          scripts: { [script]: rootScripts[script] },
        }),
      );
      const got = join(project, 'got');
      // The probe stands where cubicle.mjs does: it records its pid, then the signal it gets.
      writeFileSync(
        join(project, 'scripts', 'cubicle.mjs'),
        `import { writeFileSync, appendFileSync } from 'node:fs';
         writeFileSync(${JSON.stringify(got)}, process.pid + '\\n');
         for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { appendFileSync(${JSON.stringify(got)}, s + '\\n'); process.exit(0); });
         setInterval(() => {}, 1000);`,
      );
      const npm = spawn('npm', [script, '--silent'], { cwd: project, stdio: 'ignore' });
      const exited = once(npm, 'exit');
      let probe = 0;
      for (let i = 0; i < 200 && probe === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        try {
          probe = Number(readFileSync(got, 'utf8').split('\n')[0]);
        } catch {
          // not started yet
        }
      }
      expect(probe, 'the probe never started').toBeGreaterThan(0);
      npm.kill(signal);
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise((r) => setTimeout(() => r(false), 10_000)),
      ]);
      if (alive(probe)) process.kill(probe, 'SIGKILL');
      if (!stopped) npm.kill('SIGKILL');
      expect(readFileSync(got, 'utf8').split('\n')[1]).toBe(signal);
      expect(stopped, 'npm still ran 10 s after the signal').toBe(true);
    });
  }
});

describe("npm start's terminal shows app logs as readable lines", () => {
  it('formats pino JSON in the terminal and keeps it in the log file', async () => {
    await loadTerminalFormat(root, { color: false });
    const shown: string[] = [];
    const spy = vi
      .spyOn(console, 'log')
      .mockImplementation((line: string) => void shown.push(line));
    const json = JSON.stringify({
      level: 30,
      time: Date.parse('2026-12-06T10:00:00Z'),
      pid: 1,
      hostname: 'h',
      reqId: 'req-1',
      msg: 'request completed',
      responseTime: 3.5,
    });
    try {
      const app = spawnApp({
        root,
        name: 'api',
        entry: '-e',
        args: [`console.log(${JSON.stringify(json)}); console.log('plain line')`],
        env: { PATH: process.env.PATH ?? '' },
        logDir: join(dir, 'logs'),
        embedded,
      });
      await app.exited;
      await app.stop();
    } finally {
      spy.mockRestore();
    }
    const apiLines = shown.filter((l) => l.includes('│'));
    expect(apiLines).toHaveLength(2);
    expect(apiLines[0]).toMatch(/INFO: request completed \{"reqId":"req-1","responseTime":3\.5\}$/);
    expect(apiLines[0]).not.toContain('"level"');
    expect(apiLines[1]).toMatch(/│ plain line$/);
    expect(readFileSync(join(dir, 'logs', 'api.log'), 'utf8')).toBe(`${json}\nplain line\n`);
  });
});

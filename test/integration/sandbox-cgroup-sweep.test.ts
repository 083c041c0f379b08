// The sweep of abandoned sandbox cgroups, on the machine's real cgroupfs: it takes the empty
// cgroups of sandboxes whose stop never ran and leaves busy and just-made ones.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { sweepEmptySandboxCgroups } from '@cubicle/driver-guest';
import { afterAll, describe, expect, it } from 'vitest';

const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
const cpuRoot = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu';
// Made at the cpu hierarchy's root, beside (not inside) the installation's own `cubicle`.
const parent = join(cpuRoot, `cubicle-sweep-test-${process.pid}`);
let sleeper: ChildProcess | undefined;

afterAll(() => {
  if (sleeper?.pid) process.kill(sleeper.pid, 'SIGKILL');
  // A killed process leaves its cgroup a moment later.
  const deadline = Date.now() + 5000;
  while (existsSync(parent) && Date.now() < deadline) {
    for (const name of readdirSync(parent, { withFileTypes: true }))
      if (name.isDirectory()) {
        try {
          rmdirSync(join(parent, name.name));
        } catch {
          /* still busy */
        }
      }
    try {
      rmdirSync(parent);
    } catch {
      /* retry */
    }
  }
});

describe.runIf(process.getuid?.() === 0 && existsSync(join(cpuRoot, 'cgroup.procs')))(
  'the sweep of abandoned sandbox cgroups',
  () => {
    it('removes only old empty ones', async () => {
      mkdirSync(parent);
      if (v2) writeFileSync(join(parent, 'cgroup.subtree_control'), '+cpu');
      for (const name of ['gone-a', 'busy', 'gone-b']) mkdirSync(join(parent, name));

      sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
      await new Promise((resolve) => sleeper!.once('spawn', resolve));
      writeFileSync(join(parent, 'busy', 'cgroup.procs'), String(sleeper.pid));

      // Young: a sandbox may be between its cgroup's creation and its first process joining.
      expect(await sweepEmptySandboxCgroups(parent, 60_000)).toBe(0);
      expect(
        readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory()),
      ).toHaveLength(3);

      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await sweepEmptySandboxCgroups(parent, 10)).toBe(2);
      const left = readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory());
      expect(left.map((e) => e.name)).toEqual(['busy']);
      expect(readFileSync(join(parent, 'busy', 'cgroup.procs'), 'utf8').trim()).toBe(
        String(sleeper.pid),
      );
    });
  },
);

// The driver's V8 flags have one source (daemon-node-flags.ts); the launcher's shebang and the
// image's entrypoint must carry them to every Node process that hosts the driver.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS, daemonNodeArgs } from './daemon-node-flags.js';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

describe('DAEMON_NODE_FLAGS', () => {
  it('are the flags of the cubicle-desktop launcher (its shebang)', () => {
    const shebang = read('./cli.ts').split('\n')[0] ?? '';
    expect(shebang.startsWith('#!/usr/bin/env -S node ')).toBe(true);
    expect(shebang.replace('#!/usr/bin/env -S node ', '').split(' ')).toEqual([
      ...DAEMON_NODE_FLAGS,
    ]);
  });

  it('reach the driver in the image: it runs the launcher with an in-process daemon', () => {
    const entry = read('../../../../images/desktop/Dockerfile')
      .split('\n')
      .find((l) => l.startsWith('ENTRYPOINT'));
    const argv = JSON.parse(entry?.replace(/^ENTRYPOINT\s+/, '') ?? '[]') as string[];
    // Through the bin link, so the shebang applies (`node cli.js` would drop the flags).
    expect(argv.slice(0, 4)).toEqual(['tini', '--', 'cubicle-desktop', 'start']);
    expect(argv[argv.indexOf('--daemon') + 1]).toBe('in-process');
  });

  it('are accepted by this Node and are in effect in the process it starts', async () => {
    // A flag Node does not know makes it exit with "bad option" before running the script.
    const { stdout } = await promisify(execFile)(process.execPath, [
      ...daemonNodeArgs('-p'),
      // Churn through short-lived objects: without the flag the young generation grows to 32 MB.
      'let k = []; for (let i = 0; i < 3e6; i++) { k.push({ i }); if (k.length > 2e5) k = []; }' +
        'JSON.stringify({ argv: process.execArgv, young: require("v8").getHeapSpaceStatistics()' +
        '.find((s) => s.space_name === "new_space").space_size })',
    ]);
    const seen = JSON.parse(stdout) as { argv: string[]; young: number };
    expect(seen.argv.slice(0, DAEMON_NODE_FLAGS.length)).toEqual([...DAEMON_NODE_FLAGS]);
    expect(seen.young).toBeLessThanOrEqual(2 * 1024 * 1024);
  });
});

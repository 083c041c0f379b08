import { readFileSync } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Io } from './io.js';
import { COMMANDS, main } from './main.js';

/** run calls main with in-memory streams and no login: a command that reached the API would exit 3. */
async function run(argv: string[], stdout: NodeJS.WritableStream = new PassThrough()) {
  const out: string[] = [];
  const err: string[] = [];
  if (stdout instanceof PassThrough) stdout.on('data', (d: Buffer) => out.push(d.toString()));
  const stderr = new PassThrough();
  stderr.on('data', (d: Buffer) => err.push(d.toString()));
  const stdin = new PassThrough();
  stdin.end();
  const io: Io = { stdout, stderr, stdin, env: { CUBICLE_CONFIG: '/nonexistent/cubicle.json' } };
  const code = await main(argv, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('cubicle --help, --version', () => {
  it('every command has its own --help: its usage line, its flags, exit 0', async () => {
    for (const spec of COMMANDS) {
      const help = await run([...spec.path, '--help']);
      expect(help.code, spec.path.join(' ')).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: cubicle ${spec.path.join(' ')}\\b`));
      for (const name of Object.keys(spec.options ?? {}))
        expect(help.stdout).toContain(`--${name}`);
      expect(help.stdout).toContain('--json');
      expect((await run(['help', ...spec.path])).stdout).toBe(help.stdout);
    }
  });

  it('a group lists its commands; without a command it is a usage error', async () => {
    const group = await run(['pools', '--help']);
    expect(group.code).toBe(0);
    for (const sub of ['ls', 'get', 'plan', 'apply', 'delete'])
      expect(group.stdout).toContain(`  pools ${sub}`);
    expect((await run(['pools'])).code).toBe(2);
    const top = await run(['--help']);
    expect(top.code).toBe(0);
    for (const spec of COMMANDS) expect(top.stdout).toContain(`  ${spec.path.join(' ')}`);
  });

  it('--version prints the SDK version', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('strict command lines', () => {
  it('an unknown flag fails before any API call, naming the closest flag', async () => {
    const typo = await run(['claim', 'default', '--tl', '60']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown flag --tl; did you mean --ttl?');
    expect(typo.stderr).toContain('run `cubicle claim --help` for usage');
    const json = await run(['pools', 'ls', '--jsn']);
    expect(json.stderr).toContain('unknown flag --jsn; did you mean --json?');
    // -f is --file for pools apply and --follow for runs logs.
    expect((await run(['runs', 'logs', 'run_x', '-f', '--bogus'])).code).toBe(2);
    expect((await run(['pools', 'apply', '-f'])).stderr).toContain('--file needs a value');
  });

  it('unknown commands are suggested; missing and extra arguments are usage errors', async () => {
    expect((await run(['pols', 'ls'])).stderr).toContain(
      'unknown command pols; did you mean pools?',
    );
    expect((await run(['pools', 'lss'])).stderr).toContain('did you mean pools ls?');
    expect((await run(['claims', 'get'])).stderr).toContain('missing <claim>');
    expect((await run(['release', 'clm_a', 'clm_b'])).stderr).toContain(
      'unexpected argument clm_b',
    );
    expect((await run(['shell', 'clm_a'])).stderr).toContain('missing -- <command…>');
    expect((await run(['pools', 'ls', '--', 'x'])).code).toBe(2);
    // A correct command line gets as far as the client: not logged in is exit 3.
    expect((await run(['claims', 'ls'])).code).toBe(3);
  });
});

describe('stdout closed by its reader', () => {
  it('EPIPE on stdout ends the command with exit 0 and nothing on stderr', async () => {
    const closed = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const result = await run(['--help'], closed);
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe("the README's CLI section", () => {
  it('names every command, and every command it shows exists', () => {
    const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf("The user CLI is the SDK package's bin");
    const section = readme.slice(start, readme.indexOf('The API reference is served', start));
    expect(start).toBeGreaterThan(0);
    for (const spec of COMMANDS)
      expect(section, spec.path.join(' ')).toContain(spec.path.join(' '));
    const shown = [...section.matchAll(/(?:^|\$\(|\| )cubicle ([a-z]+)(?: ([a-z]+))?/gm)];
    expect(shown.length).toBeGreaterThan(10);
    for (const [line, first, second] of shown) {
      const exists = COMMANDS.some(
        (c) => c.path[0] === first && (c.path.length === 1 || c.path[1] === second),
      );
      expect(exists, line).toBe(true);
    }
  });
});

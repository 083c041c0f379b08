import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveStack, type LiveStack } from './live-stack.js';
import { fileURLToPath } from 'node:url';

// The install path a user takes: `npm pack` the SDK, install the tarball ALONE in an empty
// project (no workspace, no links: its dependencies come from the registry, through this
// machine's npm cache), compile the README's quick start with tsc against the installed
// declarations (skipLibCheck off: they must stand alone) and run it against a live Cubicle.

const run = promisify(execFile);
const sdkDir = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** quickStartOf extracts the SDK README's quick start (the ts block after its marker). */
function quickStartOf(): string {
  const readme = readFileSync(join(sdkDir, 'README.md'), 'utf8');
  const marker = readme.indexOf('<!-- quickstart');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(marker));
  if (marker < 0 || !block) throw new Error('packages/sdk/README.md: the quick start is missing');
  return block[1]!;
}

let live: LiveStack;
let project: string;
beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'cubicle-sdk-install-'));
  live = await startLiveStack();
}, 120_000);
afterAll(async () => {
  await live?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('@cubicle/sdk installed from its tarball alone', { timeout: 240_000 }, () => {
  it('installs without private packages; the README quick start compiles and runs', async () => {
    const { stdout: packed } = await run(
      'npm',
      ['pack', sdkDir, '--pack-destination', project, '--json', '--ignore-scripts'],
      { cwd: project },
    );
    const [{ filename }] = JSON.parse(packed) as [{ filename: string }];
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }),
    );
    const typesNode = JSON.parse(
      readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8'),
    ) as { version: string };
    await run(
      'npm',
      [
        'install',
        `./${filename}`,
        `@types/node@${typesNode.version}`,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
      ],
      { cwd: project, env: { ...process.env, npm_config_workspaces: 'false' } },
    );
    const installed = JSON.parse(
      readFileSync(join(project, 'node_modules/@cubicle/sdk/package.json'), 'utf8'),
    ) as { dependencies?: Record<string, string> };
    expect(
      Object.keys(installed.dependencies ?? {}).filter((d) => d.startsWith('@cubicle/')),
    ).toEqual([]);

    writeFileSync(join(project, 'quickstart.ts'), quickStartOf());
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'ESNext.Disposable'],
          types: ['node'],
          strict: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['quickstart.ts'],
      }),
    );
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: project,
    }).catch((error: { stdout?: string }) => {
      throw new Error(`tsc failed on the README quick start:\n${error.stdout}`);
    });
    expect(compiled.stdout).toBe('');

    // Only the variables a user sets: key and URL, and debug logging to see the redaction.
    const { stdout, stderr } = await run(process.execPath, ['out/quickstart.js'], {
      cwd: project,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        CUBICLE_API_KEY: live.apiKey,
        CUBICLE_URL: live.url,
        CUBICLE_LOG: 'debug',
      },
      timeout: 150_000,
    });
    expect(stdout).toContain('hello from the sandbox');
    expect(stdout).toMatch(/screenshot: \d{3,} bytes/);
    expect(stdout).toContain('no such pool');
    const logged = stdout + stderr;
    expect(logged).toMatch(
      /\[cubicle\] POST http:\/\/127\.0\.0\.1:\d+\/v1\/pools\/default\/claims -> 20[12]/,
    );
    expect(logged).not.toContain(live.apiKey);
  });
});

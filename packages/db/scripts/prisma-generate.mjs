// Runs `prisma generate` offline. Every Prisma CLI command first tries to download a native
// schema engine, which this environment cannot reach; generate does not need it, so we point
// PRISMA_SCHEMA_ENGINE_BINARY at a stub that fails loudly (never /bin/true, which would make
// `migrate deploy` "succeed" while applying nothing).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const stubDir = join(tmpdir(), 'cubicle-prisma');
const stub = join(stubDir, 'schema-engine-unavailable');
mkdirSync(stubDir, { recursive: true });
writeFileSync(
  stub,
  '#!/bin/sh\necho "schema-engine is not available offline; use the cubicle migration runner" >&2\nexit 1\n',
);
chmodSync(stub, 0o755);

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? stub,
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const result = spawnSync('npx', ['--no-install', 'prisma', 'generate'], {
  cwd: pkgDir,
  env,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);

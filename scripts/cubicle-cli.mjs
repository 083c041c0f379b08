#!/usr/bin/env node
// `npm run cubicle -- <command>`: the operator CLI (tenants and their API keys; `secrets rewrap`
// re-wraps stored secrets' data keys onto the newest key of CUBICLE_KEYRING). It runs against
// DATABASE_URL, or the embedded database under .cubicle/ (started for the command when
// `npm start` is not running). Results go to stdout, progress and errors to stderr.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withEmbeddedDatabase } from './lib/embedded-database.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

async function importBuilt(relative) {
  const file = join(root, relative);
  if (!existsSync(file)) {
    console.error(`${relative} is missing: run \`npm run build\` (or \`npm start\`) first`);
    process.exit(1);
  }
  return import(pathToFileURL(file).href);
}

const cli = await importBuilt('packages/tenancy/dist/cli/index.js');
const { createDb } = await importBuilt('packages/db/dist/index.js');
const argv = process.argv.slice(2);
const io = { out: (line) => console.log(line), err: (line) => console.error(line) };

const isSecrets = argv[0] === 'secrets';
// `usage export`: every tenant's rolled-up usage as CSV or JSON (control-plane usage-cli.ts).
const isUsage = argv[0] === 'usage';

/** The keyring of `npm start` when the environment has none (scripts/lib/first-run.mjs). */
function keyringSpec() {
  if (process.env.CUBICLE_KEYRING) return process.env.CUBICLE_KEYRING;
  const file = join(root, '.cubicle', 'keyring');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

async function withDb(url) {
  const db = createDb({ databaseUrl: url, maxConnections: 2 });
  try {
    if (isSecrets) {
      const secrets = await importBuilt('packages/control-plane/dist/index.js');
      return await secrets.runSecretsCli(argv, db, keyringSpec(), io);
    }
    if (isUsage) {
      const usage = await importBuilt('packages/control-plane/dist/index.js');
      return await usage.runUsageCli(argv, db, io);
    }
    return await cli.runTenancyCli(argv, db, io);
  } finally {
    await db.$disconnect();
  }
}

try {
  if (!isSecrets && !isUsage && !cli.needsDatabase(argv))
    process.exitCode = await cli.runTenancyCli(argv, undefined, io);
  else if (process.env.DATABASE_URL) process.exitCode = await withDb(process.env.DATABASE_URL);
  else {
    const quiet = { step: (_name, fn) => fn(), log: () => {} };
    process.exitCode = await withEmbeddedDatabase(root, 'npm run cubicle', quiet, withDb);
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
}

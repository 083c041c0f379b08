#!/usr/bin/env node
// cubicle-migrate: apply committed migrations to DATABASE_URL (works offline, unlike the Prisma CLI).
import { env } from './env.js';
import { migrate, MigrationError } from './migrate.js';

try {
  const { applied } = await migrate({
    databaseUrl: env.DATABASE_URL,
    log: (line) => process.stdout.write(`migrate: ${line}\n`),
  });
  process.stdout.write(`migrate: done (${applied.length} applied)\n`);
} catch (err) {
  if (err instanceof MigrationError) {
    process.stderr.write(`migrate: refused (${err.reason}): ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}

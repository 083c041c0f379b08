import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** defaultMigrationsDir is the committed Prisma migrations folder of this package. */
export const defaultMigrationsDir = fileURLToPath(
  new URL('../../prisma/migrations', import.meta.url),
);

export interface LocalMigration {
  name: string;
  sql: string;
  /** SHA-256 (hex) of migration.sql's bytes, the checksum Prisma records. */
  checksum: string;
}

/** readMigrations lists `<dir>/<name>/migration.sql` in name order (Prisma's timestamp prefixes sort). */
export function readMigrations(dir: string = defaultMigrationsDir): LocalMigration[] {
  if (!existsSync(dir)) throw new Error(`migrations folder not found: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'migration.sql')))
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const bytes = readFileSync(join(dir, name, 'migration.sql'));
      return {
        name,
        sql: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      };
    });
}

// Where Debian's packages put the server binaries. We look in the package locations, never
// in /usr/local/bin: symlinks there are a property of one machine, not of a fresh install.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const POSTGRES_ROOT = '/usr/lib/postgresql';
const REDIS_CANDIDATES = ['/usr/bin/redis-server', '/usr/sbin/redis-server'];

export interface PostgresBinaries {
  version: number;
  binDir: string;
  initdb: string;
  postgres: string;
}

function binariesFor(version: number): PostgresBinaries {
  const binDir = join(POSTGRES_ROOT, String(version), 'bin');
  return { version, binDir, initdb: join(binDir, 'initdb'), postgres: join(binDir, 'postgres') };
}

/** installedPostgresVersions lists the major versions of Debian's postgresql-N packages, newest first. */
export function installedPostgresVersions(): number[] {
  if (!existsSync(POSTGRES_ROOT)) return [];
  return readdirSync(POSTGRES_ROOT)
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((version) => existsSync(binariesFor(version).postgres))
    .sort((a, b) => b - a);
}

/**
 * findPostgres returns the binaries of the newest installed PostgreSQL, or of `version` exactly
 * (an existing data directory only runs under its own major version).
 */
export function findPostgres(version?: number): PostgresBinaries {
  const versions = installedPostgresVersions();
  const chosen = version ?? versions[0];
  if (chosen === undefined || !versions.includes(chosen)) {
    const wanted = version === undefined ? 'PostgreSQL' : `PostgreSQL ${version}`;
    throw new Error(
      `${wanted} is not installed under ${POSTGRES_ROOT}/<version>/bin ` +
        `(found: ${versions.join(', ') || 'none'}); install the Debian package ` +
        `(npm run bootstrap does it)`,
    );
  }
  return binariesFor(chosen);
}

/** findRedisServer returns the path of Debian's redis-server binary. */
export function findRedisServer(): string {
  const found = REDIS_CANDIDATES.find((candidate) => existsSync(candidate));
  if (!found) {
    throw new Error(
      `redis-server is not installed (looked in ${REDIS_CANDIDATES.join(', ')}); install the ` +
        `Debian package redis-server (npm run bootstrap does it)`,
    );
  }
  return found;
}

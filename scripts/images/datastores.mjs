// The in-chart PostgreSQL and Redis of the Helm chart, as images made from Debian packages for the
// real-node test cluster: the chart's defaults (postgres:16-bookworm, redis:7-bookworm) live on
// Docker Hub, which the test machines cannot reach. Same user (999) and the same interface the
// chart relies on (POSTGRES_* variables and PGDATA; redis-server arguments), entrypoints in
// images/test-datastores/. Debian layer only: no repository layer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A system user (uid = gid) written into the rootfs before its packages install (999, as upstream's). */
const systemUser = (name, home) =>
  `echo '${name}:x:999:999::${home}:/usr/sbin/nologin' >> "$1"/etc/passwd && ` +
  `echo '${name}:x:999:' >> "$1"/etc/group`;

/** shellQuoted makes `text` one shell word, whatever it holds (a clone's path may have spaces). */
const shellQuoted = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * entrypointHooks copy an entrypoint into the rootfs with a shell hook: mmdebstrap's own
 * `copy-in` splits its arguments at spaces, and a clone under `/tmp/ci dir` failed there. The
 * layer's cache key names the file, not where this clone keeps it (`keyHooks`): its content is
 * in the key as `inputs`, so every clone of the same sources shares the cached layer.
 */
function entrypointHooks(root, file) {
  const source = join(root, 'images', 'test-datastores', file);
  const copy = (from) =>
    `cp ${from} "$1"/usr/local/bin/${file} && chmod 0755 "$1"/usr/local/bin/${file}`;
  return {
    source,
    hooks: [copy(shellQuoted(source))],
    keyHooks: [copy(`images/test-datastores/${file}`)],
  };
}

/**
 * withEntrypoint answers a spec's `hooks` (the entrypoint copied first among the customize hooks)
 * and `keyHooks`, the same hooks as any clone reads them, for the layer's cache key.
 */
const withEntrypoint = (entry, { essential, customize }) => ({
  hooks: { essential, customize: [...entry.hooks, ...customize] },
  keyHooks: { essential, customize: [...entry.keyHooks, ...customize] },
});

/** datastoreSpecs returns, per image name, its packages, rootfs hooks and image config. */
export function datastoreSpecs(root) {
  const pg = entrypointHooks(root, 'postgres-entrypoint.sh');
  const redis = entrypointHooks(root, 'redis-entrypoint.sh');
  return {
    postgres: {
      packages: ['postgresql-15'],
      ...withEntrypoint(pg, {
        essential: [systemUser('postgres', '/var/lib/postgresql')],
        customize: [
          // The package's own cluster: the entrypoint makes one in PGDATA instead.
          'rm -rf "$1"/var/lib/postgresql/15 "$1"/etc/postgresql/15',
          'mkdir -p "$1"/var/run/postgresql && chown 999:999 "$1"/var/run/postgresql',
        ],
      }),
      inputs: readFileSync(pg.source, 'utf8'),
      config: {
        User: '999:999',
        Env: [`PATH=${PATH}`, 'PGDATA=/var/lib/postgresql/data'],
        Entrypoint: ['/usr/local/bin/postgres-entrypoint.sh'],
        WorkingDir: '/',
        ExposedPorts: { '5432/tcp': {} },
      },
    },
    redis: {
      packages: ['redis-server'],
      ...withEntrypoint(redis, {
        essential: [systemUser('redis', '/var/lib/redis')],
        customize: ['mkdir -p "$1"/data && chown 999:999 "$1"/data'],
      }),
      inputs: readFileSync(redis.source, 'utf8'),
      config: {
        User: '999:999',
        Env: [`PATH=${PATH}`],
        Entrypoint: ['/usr/local/bin/redis-entrypoint.sh'],
        WorkingDir: '/data',
        ExposedPorts: { '6379/tcp': {} },
      },
    },
  };
}

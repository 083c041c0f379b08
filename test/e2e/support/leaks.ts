import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '@cubicle/db';
import { sqlPoolOf } from '@cubicle/db';
import { Redis } from 'ioredis';
import { redisOptionsFromUrl } from '../../harness/index.js';

/** The spellings a leak could take: raw, base64, URL-encoded. */
export const leakForms = (v: string) => [
  v,
  Buffer.from(v).toString('base64').replace(/=+$/, ''),
  encodeURIComponent(v),
];

/** countLeaks counts every spelling of every value in `text`. */
export const countLeaks = (text: string, values: string[]) =>
  values.flatMap(leakForms).reduce((n, form) => n + text.split(form).length - 1, 0);

/** dumpRedis reads every key of the installation's Redis, whatever its type. */
export async function dumpRedis(url: string): Promise<{ keys: number; text: string }> {
  const redis = new Redis({ ...redisOptionsFromUrl(url), keyPrefix: '' });
  const parts: string[] = [];
  let keys = 0;
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of batch) {
        keys++;
        const type = await redis.type(key);
        let value: unknown;
        if (type === 'string')
          value = await redis.getBuffer(key).then((b) => b?.toString('latin1'));
        else if (type === 'hash') value = await redis.hgetall(key);
        else if (type === 'list') value = await redis.lrange(key, 0, -1);
        else if (type === 'set') value = await redis.smembers(key);
        else if (type === 'zset') value = await redis.zrange(key, '0', '-1');
        else if (type === 'stream') value = await redis.xrange(key, '-', '+');
        parts.push(key, JSON.stringify(value ?? null));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { keys, text: parts.join('\n') };
}

/**
 * dumpTables reads every row of every table of the database as text (bytea as hex), what a
 * `pg_dump --data-only` holds.
 */
export async function dumpTables(db: Db): Promise<{ tables: number; text: string }> {
  const pool = sqlPoolOf(db);
  const { rows } = await pool.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
     FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const parts: string[] = [];
  for (const { name } of rows) {
    const { rows: data } = await pool.query<{ t: string }>(`SELECT t::text AS t FROM ${name} t`);
    parts.push(name, ...data.map((r) => r.t));
  }
  return { tables: rows.length, text: parts.join('\n') };
}

/** readFilesUnder reads every regular file under `dir` (at most `maxBytes` each) as latin1 text. */
export async function readFilesUnder(dir: string, maxBytes = 8 << 20): Promise<string> {
  const parts: string[] = [];
  const walk = async (at: string): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const path = join(at, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) {
        const size = (await stat(path).catch(() => null))?.size ?? 0;
        if (size > 0 && size <= maxBytes)
          parts.push(await readFile(path, 'latin1').catch(() => ''));
      }
    }
  };
  await walk(dir);
  return parts.join('\n');
}

/** processEnvironments reads /proc/<pid>/environ of every process this user can read. */
export async function processEnvironments(): Promise<{ processes: number; text: string }> {
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  const parts: string[] = [];
  for (const pid of pids) {
    const env = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => null);
    if (env !== null) parts.push(env);
  }
  return { processes: parts.length, text: parts.join('\n') };
}

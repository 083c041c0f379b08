// Password authentication for the private postgres, on its unix socket too: whoever reaches the
// socket (a process that was tricked into connecting, a sandbox that found the path) still has to
// prove the per-installation password. Data directories made before this (trust auth) are
// migrated, stopped (single-user mode, before the first start) or running (over the socket,
// while trust still holds, then a reload).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PostgresBinaries } from './binaries.js';
import { scramVerifier } from './credentials.js';
import type { ServiceUser } from './fs-setup.js';
import { SERVER_ENV, type LogFn } from './service.js';

/** The whole pg_hba.conf we keep: local connections only (no TCP listener), each with a password. */
export const PG_HBA =
  '# Written by @cubicle/embedded: every connection proves the password (SCRAM), the unix\n' +
  '# socket included. There is no TCP listener (listen_addresses is empty).\n' +
  'local all all scram-sha-256\n';

/** isPasswordOnly reports whether `dataDir`'s pg_hba.conf is ours (no trust or peer line left). */
export function isPasswordOnly(dataDir: string): boolean {
  try {
    return readFileSync(join(dataDir, 'pg_hba.conf'), 'utf8') === PG_HBA;
  } catch {
    return false;
  }
}

/** The statement that sets the superuser's password as a verifier (never the plaintext). */
function alterRole(password: string): string {
  return `ALTER ROLE postgres PASSWORD '${scramVerifier(password)}';\n`;
}

/**
 * requirePasswordStopped sets the superuser's password and writes PG_HBA on a data directory no
 * server runs on, through single-user mode (no socket is opened, so no one connects meanwhile).
 */
export async function requirePasswordStopped(
  binaries: PostgresBinaries,
  dataDir: string,
  user: ServiceUser | undefined,
  password: string,
  log: LogFn,
): Promise<void> {
  const started = Date.now();
  const args = [
    '--single',
    '-D',
    dataDir,
    '-c',
    'listen_addresses=',
    '-c',
    'log_min_messages=warning',
    'postgres',
  ];
  const output = await run(binaries.postgres, args, dataDir, user, alterRole(password));
  if (output.code !== 0 || /\b(ERROR|FATAL):/.test(output.text)) {
    throw new Error(`setting the postgres password failed (exit ${output.code}):\n${output.text}`);
  }
  writeFileSync(join(dataDir, 'pg_hba.conf'), PG_HBA);
  log(`postgres: password authentication set up in ${Date.now() - started} ms`);
}

/**
 * requirePasswordRunning migrates a live server of an older installation: while its trust lines
 * still admit us on the socket, it sets the password, writes PG_HBA and reloads the server, then
 * checks that a connection without the password is refused.
 */
export async function requirePasswordRunning(
  binaries: PostgresBinaries,
  dataDir: string,
  socketDir: string,
  user: ServiceUser | undefined,
  password: string,
  log: LogFn,
): Promise<void> {
  const psql = join(binaries.binDir, 'psql');
  const args = [
    '-X',
    '-q',
    '-v',
    'ON_ERROR_STOP=1',
    '-h',
    socketDir,
    '-U',
    'postgres',
    '-d',
    'postgres',
  ];
  const set = await run(psql, args, '/', user, alterRole(password));
  if (set.code !== 0) {
    throw new Error(
      `postgres on ${dataDir} runs without password authentication and could not be migrated ` +
        `(exit ${set.code}): ${set.text.trim()}; stop it and start again`,
    );
  }
  writeFileSync(join(dataDir, 'pg_hba.conf'), PG_HBA);
  const reload = await run(psql, args, '/', user, 'SELECT pg_reload_conf();\n');
  if (reload.code !== 0) throw new Error(`reloading postgres failed: ${reload.text.trim()}`);
  log(`postgres: the running server on ${dataDir} now requires its password`);
}

/** run executes a postgres binary as `user` with `input` on stdin and collects its output. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  user: ServiceUser | undefined,
  input = '',
): Promise<{ code: number | null; text: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: SERVER_ENV,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stdin.on('error', () => {
      // It exited before reading its input; its exit code and output say why.
    });
    child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ code, text: Buffer.concat(chunks).toString() }));
  });
}

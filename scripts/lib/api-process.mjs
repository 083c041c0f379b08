// Spawning a Node app of ours (apps/*/dist/main.js) under the supervisor: own process group,
// output streamed with a name prefix (readable lines, terminal-log.mjs), kept as it came in a log
// file and a short in-memory tail.
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { portInUseMessage, portOwner } from './port-owner.mjs';
import { terminalLine } from './terminal-log.mjs';
import { dim } from './ui.mjs';

/** PortInUseError: another process answers on the port the app was started for. */
export class PortInUseError extends Error {}

const TAIL_LINES = 40;

/**
 * spawnApp starts `node <entry> [args]` in `root` with exactly `env` (nothing inherited), as a
 * process-group leader so a terminal's Ctrl-C reaches only the supervisor, which then stops
 * everything in order. With `user` ({ uid, gid }) it runs as that account, without supplementary
 * groups. Its output is kept by the supervisor in `<logDir>/<name>.log`, readable by us alone.
 */
export function spawnApp({ root, name, entry, args = [], env, logDir, embedded, user }) {
  mkdirSync(logDir, { recursive: true, mode: 0o700 });
  // Logs older versions made world-readable are closed too: they tell much about the tenants.
  chmodSync(logDir, 0o700);
  const logFile = join(logDir, `${name}.log`);
  const file = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
  const tail = [];
  // libuv drops the supplementary groups (setgroups(0)) along with uid and gid.
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const onLine = (line) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    file.write(`${line}\n`);
    console.log(`${dim(`${name.padEnd(8)}│`)} ${terminalLine(line)}`);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(onLine);
    });
    stream.on('end', () => partial && onLine(partial));
  }
  // 'exit' can come before the last output is read: stop() waits for both pipes to close
  // (bounded, in case a process the app left behind still holds one) before closing the log.
  const drained = Promise.race([
    Promise.all([child.stdout, child.stderr].map((s) => new Promise((r) => s.once('close', r)))),
    new Promise((r) => setTimeout(r, 2_000).unref()),
  ]);
  const pid = child.pid ?? -1;
  const startTime = embedded.processStartTime(pid);
  return {
    pid,
    startTime,
    stopSignal: 'SIGTERM',
    isGroupLeader: true,
    exited,
    logFile,
    logTail: (lines = TAIL_LINES) => tail.slice(-lines),
    stop: async () => {
      await embedded.stopProcess({
        pid,
        startTime,
        signal: 'SIGTERM',
        isGroup: true,
        timeoutMs: 10_000,
      });
      await exited;
      await drained;
      await new Promise((resolve) => file.end(resolve));
    },
  };
}

/** processGroupOf reads a process's group id from /proc (undefined when it is gone). */
function processGroupOf(pid) {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(raw.slice(raw.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/**
 * waitHealthy polls `url` until it answers 200; it fails early when the process exits. With
 * `owner: { port, pid }`, a 200 counts only when the socket listening on `port` belongs to the
 * process group of `pid` (the app just started): another process answering on the port is
 * reported by name, never taken for ours.
 */
export async function waitHealthy(url, exited, timeoutMs = 30_000, owner) {
  let exit;
  void exited.then((value) => (exit = value));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exit)
      throw new Error(
        `it exited (code ${exit.code}, signal ${exit.signal}) before ${url} answered`,
      );
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) {
        if (!owner) return;
        const listener = portOwner(owner.port);
        if (listener?.pid !== undefined && processGroupOf(listener.pid) === owner.pid) return;
        if (listener && listener.pid !== undefined)
          throw new PortInUseError(portInUseMessage(owner.port, listener, owner.variable));
      }
    } catch (error) {
      if (error instanceof PortInUseError) throw error;
      // Not listening yet.
    }
    if (Date.now() > deadline)
      throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

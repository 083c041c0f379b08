// The reaper outlives whoever started the private servers. Its parent tells it, one JSON line at
// a time on stdin, which processes and paths it owns; when stdin reaches end of file (the parent
// exited, however it died: Vitest exits 1 ms after SIGINT, a supervisor may get SIGKILL) it stops
// the processes still running, newest first, and removes the paths.
// Plain JavaScript with no imports beyond Node so it runs without a build; it is the emergency
// path only, the normal stop lives in src/proc.ts.
import { readFileSync, readdirSync, rmSync } from 'node:fs';

/** @type {Map<number, {pid: number, startTime?: string, signal: string, isGroup?: boolean}>} */
const watched = new Map();
/** @type {Set<string>} */
const paths = new Set();

function stat(pid) {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]), startTime: fields[19] };
  } catch {
    return undefined;
  }
}

function isRunning(pid, startTime) {
  const s = stat(pid);
  if (!s || s.state === 'Z' || s.state === 'X') return false;
  return startTime === undefined || s.startTime === startTime;
}

function descendants(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (!s) continue;
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), Number(entry)]);
  }
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function send(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitGone(pids, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pids.every((pid) => !isRunning(pid))) return true;
    await sleep(50);
  }
  return pids.every((pid) => !isRunning(pid));
}

async function stop({ pid, startTime, signal, isGroup }) {
  if (!isRunning(pid, startTime)) return;
  const seen = new Set(descendants(pid));
  send(isGroup ? -pid : pid, signal);
  if ((await waitGone([pid], 10_000)) && (await waitGone([...seen], 2_000))) return;
  for (const child of descendants(pid)) seen.add(child);
  send(isGroup ? -pid : pid, 'SIGKILL');
  for (const child of seen) send(child, 'SIGKILL');
  await waitGone([pid, ...seen], 5_000);
}

function handle(line) {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.op === 'watch') watched.set(message.pid, message);
  if (message.op === 'unwatch') watched.delete(message.pid);
  if (message.op === 'remove') paths.add(message.path);
  if (message.op === 'keep') paths.delete(message.path);
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) handle(line);
});
process.stdin.on('end', async () => {
  handle(buffered);
  for (const target of [...watched.values()].reverse()) await stop(target);
  for (const path of paths) rmSync(path, { recursive: true, force: true });
  process.exit(0);
});

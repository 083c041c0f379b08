// A lock for what only one test file on the machine may hold at a time (the fake internet's
// host routes): test files run two at a time, and several test runs may share a machine.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const LOCK_DIR = '/run/cubicle-test-locks';

interface Holder {
  pid: number;
  startTime: string | undefined;
}

/** startTimeOf tells a live process from a later one with the same pid (undefined: gone). */
function startTimeOf(pid: number): string | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

function liveHolder(file: string): Holder | undefined {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Holder;
    if (startTimeOf(holder.pid) === holder.startTime) return holder;
  } catch {
    // No file, a half-written one or a dead holder's: nobody holds the lock.
  }
  return undefined;
}

/**
 * acquireMachineLock waits until no live process holds lock `name`, takes it and returns its
 * release. A holder that died without releasing is taken over.
 */
export async function acquireMachineLock(
  name: string,
  { timeoutMs = 600_000, log = (line: string) => console.log(line) } = {},
): Promise<() => void> {
  mkdirSync(LOCK_DIR, { recursive: true });
  const file = join(LOCK_DIR, `${name}.json`);
  const me: Holder = { pid: process.pid, startTime: startTimeOf(process.pid) };
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    try {
      writeFileSync(file, JSON.stringify(me), { flag: 'wx' });
      let held = true;
      return () => {
        if (held && liveHolder(file)?.pid === process.pid) rmSync(file, { force: true });
        held = false;
      };
    } catch {
      const holder = liveHolder(file);
      if (!holder) {
        // Stale (or being written this instant: the writer's wx then wins or we retry).
        if (Date.now() - mtimeOrNow(file) > 2_000) rmSync(file, { force: true });
        await sleep(100);
        continue;
      }
      if (holder.pid === process.pid) throw new Error(`this process already holds ${name}`);
      if (Date.now() > deadline)
        throw new Error(`${name}: process ${holder.pid} still holds it after ${timeoutMs} ms`);
      if (!said) log(`${name}: waiting for process ${holder.pid}, which holds it`);
      said = true;
      await sleep(250);
    }
  }
}

function mtimeOrNow(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return Date.now();
  }
}

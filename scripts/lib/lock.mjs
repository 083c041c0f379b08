// One Cubicle supervisor per data directory: .cubicle/cubicle.pid names the process that owns
// the embedded servers right now (`npm start` or a one-off `npm run db:migrate`).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function startTimeOf(pid) {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** currentHolder returns `{ pid, command }` of a live owner, or undefined (a dead owner's file is stale). */
export function currentHolder(dataRoot) {
  try {
    const holder = JSON.parse(readFileSync(join(dataRoot, 'cubicle.pid'), 'utf8'));
    if (holder.pid !== process.pid && startTimeOf(holder.pid) === holder.startTime) return holder;
  } catch {
    // No file, or an unreadable one: nobody holds the lock.
  }
  return undefined;
}

/** acquireLock records this process as the owner; call only when currentHolder() is undefined. */
export function acquireLock(dataRoot, command) {
  mkdirSync(dataRoot, { recursive: true, mode: 0o755 });
  const file = join(dataRoot, 'cubicle.pid');
  writeFileSync(
    file,
    JSON.stringify({ pid: process.pid, startTime: startTimeOf(process.pid), command }),
  );
  return () => rmSync(file, { force: true });
}

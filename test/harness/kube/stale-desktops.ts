// Desktops the node agent starts carry their agent's identity in their id, so a later agent can
// stop the ones whose agent died before its reaper knew them (killed while a desktop started).
import { listDesktopIds, stopDesktopById } from '@cubicle/driver-guest';
import { isRunning, processStartTime } from '../../../packages/embedded/src/index.js';

const AGENT_DESKTOP = /^kube-(\d+)_(\d+)-/;

/** agentDesktopId is `kube-<agent pid>_<agent start time>-<object uid>` (at most 64 characters). */
export function agentDesktopId(uid: string): string {
  return `kube-${process.pid}_${processStartTime(process.pid) ?? '0'}-${uid}`;
}

/** stopOrphanedDesktops stops agent desktops whose agent process is gone; returns their ids. */
export async function stopOrphanedDesktops(): Promise<string[]> {
  const orphans = (await listDesktopIds()).filter((id) => {
    const match = AGENT_DESKTOP.exec(id);
    return match !== null && !isRunning(Number(match[1]), match[2]);
  });
  await Promise.all(orphans.map((id) => stopDesktopById(id)));
  return orphans;
}

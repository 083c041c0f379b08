import type { ArchiveEntry } from '@cubicle/contract/guest';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { chunkSizes, stageToGuest } from './chunk-transfer.js';
import { hostStageOf, type HostChunkFiles } from './host-stage.js';

type Guest = GuestClient | SandboxGuestClient;

/** distinctChunks answers every chunk id the entries' files use, each once. */
export function distinctChunks(entries: readonly ArchiveEntry[]): string[] {
  const ids = new Set<string>();
  for (const e of entries) if (e.type === 'file') for (const h of e.chunks) ids.add(h);
  return [...ids];
}

/**
 * stageRestore puts the chunks a restore of `entries` needs where the guest's `archive.apply`
 * finds them. A desktop with a host stage on this machine (hostStageOf) gets them written there
 * by `files` (once per call, linked into further desktops' stages; the caller clears them after
 * the applies): all of the manifest's chunks, without asking `archive.need` first, as a desktop
 * restored into is a fresh one (a chunk its home already holds is only placed in vain). Any other
 * desktop is asked `archive.need` and sent what it lacks in binary `archive.stage` transfers.
 */
export async function stageRestore(
  guest: Guest,
  entries: readonly ArchiveEntry[],
  files: HostChunkFiles,
  timeoutMs: number,
): Promise<void> {
  const stage = 'guest' in guest ? await hostStageOf(guest.guest.endpoint) : null;
  if (stage) return files.place(stage, distinctChunks(entries));
  const { needed } = await guest.call('archive.need', { entries: [...entries] }, { timeoutMs });
  await stageToGuest(guest, needed, chunkSizes(entries), files.source, timeoutMs);
}

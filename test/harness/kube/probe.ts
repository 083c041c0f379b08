// The readiness probe kubelet would run: an HTTP GET that counts as success for 200–399.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * waitForProbe polls `url` until it answers with a success status (true) or `isWanted()` turns
 * false because the workload was stopped meanwhile (false). Like kubelet, it never gives up.
 */
export async function waitForProbe(url: string, isWanted: () => boolean): Promise<boolean> {
  while (isWanted()) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      if (response.status >= 200 && response.status < 400) return true;
    } catch {
      // Not listening yet, or too slow this time: try again.
    }
    await sleep(250);
  }
  return false;
}

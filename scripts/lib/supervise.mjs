// Restarting a crashed component of `npm start` (worker, API, web) with backoff, and giving up
// when it crash-loops, so one crash costs a few seconds instead of the whole stack.

/** The restart policy `npm start` uses; tests pass shorter ones. */
export const RESTART_POLICY = {
  /** The first restart waits this long; each further one in the window doubles it. */
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  /** More than `maxRestarts` crashes within `windowMs` is a crash loop: the stack stops. */
  maxRestarts: 5,
  windowMs: 5 * 60_000,
};

/**
 * restartDelayMs is the backoff before restart number `n` (1-based) within the window:
 * initial · 2^(n-1), capped.
 */
export function restartDelayMs(policy, n) {
  return Math.min(policy.initialDelayMs * 2 ** (n - 1), policy.maxDelayMs);
}

/**
 * superviseProcess keeps one component running: `start()` returns a process handle
 * (`{ pid, exited, stop, logTail }`, as spawnApp's); when it exits on its own, it is started
 * again after a backoff, and `onRestart(handle)` tells the caller the new pid. After more than
 * `maxRestarts` crashes within `windowMs`, or when a restart itself fails, `onGiveUp(reason)` is
 * called once and nothing is restarted any more. The returned handle's `stop()` stops the
 * current process and cancels a pending restart; its `pid` is the current process's.
 */
export function superviseProcess({
  name,
  first,
  start,
  policy = RESTART_POLICY,
  log,
  onRestart = () => {},
  onGiveUp,
}) {
  let current = first;
  let isStopping = false;
  let pendingTimer;
  let wakePending;
  let restarting;
  const crashes = [];
  let restarts = 0;

  const describe = (exit) =>
    exit.signal ? `signal ${exit.signal}` : `code ${exit.code ?? 'unknown'}`;

  const giveUp = (reason) => {
    if (isStopping) return;
    isStopping = true;
    onGiveUp(reason);
  };

  const watch = (handle) => {
    void handle.exited.then(async (exit) => {
      if (isStopping || handle !== current) return;
      const now = Date.now();
      crashes.push(now);
      while (crashes.length > 0 && crashes[0] < now - policy.windowMs) crashes.shift();
      const tail = handle.logTail?.(20) ?? [];
      if (crashes.length > policy.maxRestarts) {
        log(
          `✗ ${name} (pid ${handle.pid}) exited (${describe(exit)}): ${crashes.length} crashes within ${policy.windowMs / 1000} s, not restarting it; last lines:`,
        );
        for (const line of tail) log(`  ${line}`);
        giveUp(`${name} crash-looped`);
        return;
      }
      const delay = restartDelayMs(policy, crashes.length);
      log(
        `✗ ${name} (pid ${handle.pid}) exited (${describe(exit)}); restarting in ${delay / 1000} s (crash ${crashes.length} of at most ${policy.maxRestarts} per ${policy.windowMs / 1000} s); last lines:`,
      );
      for (const line of tail) log(`  ${line}`);
      await new Promise((resolve) => {
        wakePending = resolve;
        pendingTimer = setTimeout(resolve, delay);
      });
      pendingTimer = undefined;
      wakePending = undefined;
      if (isStopping) return;
      let next;
      try {
        restarting = start();
        next = await restarting;
      } catch (error) {
        log(`✗ ${name} did not restart: ${error.message}`);
        giveUp(`${name} did not restart`);
        return;
      } finally {
        restarting = undefined;
      }
      // stop() came while it started: stop() waits for `restarting` and stops it.
      if (isStopping) return;
      current = next;
      restarts++;
      log(`↻ ${name} restarted (pid ${next.pid})`);
      onRestart(next);
      watch(next);
    });
  };
  watch(first);

  return {
    get pid() {
      return current.pid;
    },
    get restarts() {
      return restarts;
    },
    get exited() {
      return current.exited;
    },
    logTail: (lines) => current.logTail?.(lines) ?? [],
    stop: async () => {
      isStopping = true;
      clearTimeout(pendingTimer);
      wakePending?.();
      const late = await restarting?.catch(() => undefined);
      await Promise.all([current.stop(), late?.stop()]);
    },
  };
}

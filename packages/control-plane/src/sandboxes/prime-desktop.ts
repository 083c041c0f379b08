import { setTimeout as sleep } from 'node:timers/promises';
import type { PoolPrime, PrimeApp, PrimedWindow } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import {
  LAUNCH_MAX_WAIT_MS,
  VERIFY_MAX_TIMEOUT_MS,
  type StatePredicate,
  type WindowLaunchResponse,
} from '@cubicle/contract/guest';
import type { SandboxGuestClient } from '../guest/guest-client.js';

/** Beyond a guest call's own wait: the answer's way back, so the call is not cut before it. */
const CALL_SLACK_MS = 5_000;
/** The pause between samples of a wait (a verify answers at its own timeout). */
const MIN_ROUND_MS = 100;
/** One window-list call: a few ms on a quiet desktop, seconds on a busy machine. */
const LIST_TIMEOUT_MS = 5_000;
/** The warming observe at the end (a big page's first read takes a few hundred ms). */
const WARM_OBSERVE_TIMEOUT_MS = 10_000;

/**
 * PrimeFailure is a desktop that could not be primed: its message is the sandbox's
 * failure_reason ("prime failed: browser: …"), so an operator reads what went wrong.
 */
export class PrimeFailure extends Error {
  constructor(app: PrimeApp['app'] | null, why: string) {
    super(`prime failed: ${app ? `${app}: ` : ''}${why}`.slice(0, 500));
    this.name = 'PrimeFailure';
  }
}

/**
 * primeDesktop launches the pool's prime apps on a desktop that is up, in order, through its
 * guest driver, waits for each one's `wait_for`, and answers the windows they opened. The whole
 * priming is bounded by `timeout_seconds`; any app without its window (or whose wait did not
 * hold) in that time is a PrimeFailure. The windows are listed once at the end, so a window that
 * opened and closed again during priming fails it too, and the titles are the final ones.
 */
export async function primeDesktop(
  guest: SandboxGuestClient,
  prime: PoolPrime,
  signal: AbortSignal,
  now: () => number = Date.now,
): Promise<PrimedWindow[]> {
  const deadline = now() + prime.timeout_seconds * 1000;
  const left = () => deadline - now();
  const primed: { app: PrimeApp['app']; windowId: number; pid: number }[] = [];
  for (const app of prime.apps) {
    if (left() <= 0)
      throw new PrimeFailure(app.app, `not started within ${prime.timeout_seconds} s`);
    const waitMs = Math.min(left(), LAUNCH_MAX_WAIT_MS);
    const launched = await guestStep(app.app, () =>
      guest.call(
        'windows.launch',
        { app: app.app, ...(app.url ? { url: app.url } : {}), wait_for_window_ms: waitMs },
        { timeoutMs: waitMs + CALL_SLACK_MS, signal },
      ),
    );
    if (launched.window_wait !== 'found')
      throw new PrimeFailure(app.app, whyNoWindow(launched, prime.timeout_seconds));
    const windowId = launched.window.window_id;
    if (app.wait_for) await waitUntil(guest, app, windowId, left, prime.timeout_seconds, signal);
    primed.push({ app: app.app, windowId, pid: launched.window.pid ?? launched.pid });
  }
  const { windows } = await guestStep(null, () =>
    guest.call('windows.list', undefined, { timeoutMs: 10_000, signal }),
  );
  const answer = primed.map((p) => {
    const window = windows.find((w) => w.window_id === p.windowId);
    if (!window) throw new PrimeFailure(p.app, 'its window closed while the desktop was primed');
    return { app: p.app, window_id: p.windowId, title: window.title, pid: p.pid };
  });
  for (const p of answer) await warmObserve(guest, p.window_id, left, signal);
  return answer;
}

/**
 * warmObserve reads a primed window's tree once, unseen, so the agent's first observe finds the
 * guest's mirror of the app (its accessible objects, extents and bindings) already built: a
 * cold first observe of Chromium took 188–618 ms against 18–47 ms for the next ones. Best
 * effort: a window that cannot be read yet is the agent's to observe, not a failed prime.
 */
async function warmObserve(
  guest: SandboxGuestClient,
  windowId: number,
  left: () => number,
  signal: AbortSignal,
): Promise<void> {
  const timeoutMs = Math.min(left(), WARM_OBSERVE_TIMEOUT_MS);
  if (timeoutMs <= 0) return;
  await guest
    .call('observe', { window_id: windowId, include_screenshot: false }, { timeoutMs, signal })
    .catch(() => undefined);
}

function whyNoWindow(launched: WindowLaunchResponse, timeoutSeconds: number): string {
  switch (launched.window_wait) {
    case 'exited':
      return `exited before opening a window (${
        launched.signal ? `signal ${launched.signal}` : `exit code ${launched.exit_code}`
      })`;
    case 'timed_out':
      return `no window within ${timeoutSeconds} s`;
    case 'skipped':
    case 'found':
      return 'no window';
    default:
      return launched satisfies never;
  }
}

/**
 * waitUntil samples the app's wait condition until it holds or the priming's time is up. A title
 * is read from the window list (EWMH, ~10 ms), never from the accessibility tree; an element
 * needs the tree (verify_state). A sample the guest was too slow to answer is taken again while
 * time is left: a busy machine makes priming slower, not wrong.
 */
async function waitUntil(
  guest: SandboxGuestClient,
  app: PrimeApp,
  windowId: number,
  left: () => number,
  timeoutSeconds: number,
  signal: AbortSignal,
): Promise<void> {
  const wait = app.wait_for!;
  if (wait.kind === 'delay') {
    if (wait.ms > left())
      throw new PrimeFailure(app.app, `its delay outlasts the ${timeoutSeconds} s timeout`);
    await sleep(wait.ms, undefined, { signal });
    return;
  }
  let seenTitle: string | undefined;
  for (;;) {
    const held = await sampleOnce(guest, app, windowId, left, signal).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'timeout') return null;
      throw err;
    });
    if (held === true) return;
    if (typeof held === 'string') seenTitle = held;
    if (left() <= MIN_ROUND_MS)
      throw new PrimeFailure(
        app.app,
        wait.kind === 'window_title'
          ? `the window title did not contain "${wait.contains}" within ${timeoutSeconds} s${
              seenTitle !== undefined ? ` (it was "${seenTitle.slice(0, 200)}")` : ''
            }`
          : `no element named "${wait.name}" within ${timeoutSeconds} s`,
      );
    await sleep(Math.min(MIN_ROUND_MS, left()), undefined, { signal });
  }
}

/**
 * sampleOnce checks the wait once: true when it holds; otherwise the title seen (a title wait)
 * or false (an element wait). A window gone, or a guest error other than its own slowness
 * (`timeout`, thrown for the caller to sample again), fails the priming.
 */
async function sampleOnce(
  guest: SandboxGuestClient,
  app: PrimeApp,
  windowId: number,
  left: () => number,
  signal: AbortSignal,
): Promise<boolean | string> {
  const wait = app.wait_for!;
  if (wait.kind === 'window_title') {
    const { windows } = await guestStep(
      app.app,
      () => guest.call('windows.list', undefined, { timeoutMs: LIST_TIMEOUT_MS, signal }),
      true,
    );
    const title = windows.find((w) => w.window_id === windowId)?.title;
    if (title === undefined)
      throw new PrimeFailure(app.app, 'its window closed before it was ready');
    return title.includes(wait.contains) ? true : title;
  }
  if (wait.kind !== 'element') return true;
  const predicate: StatePredicate = {
    kind: 'element_exists',
    selector: { name: wait.name, ...(wait.role ? { role: wait.role } : {}) },
    unique: false,
  };
  const timeoutMs = Math.max(0, Math.min(left(), VERIFY_MAX_TIMEOUT_MS));
  const answer = await guestStep(
    app.app,
    () =>
      guest.call(
        'verify_state',
        { window_id: windowId, predicates: [predicate], timeout_ms: timeoutMs },
        { timeoutMs: timeoutMs + CALL_SLACK_MS, signal },
      ),
    true,
  );
  // `unknown` (a page whose tree is not readable yet) is sampled again while time is left.
  return answer.status === 'satisfied';
}

/**
 * guestStep turns a guest's refusal (an AppError) into a PrimeFailure naming the app. A wait's
 * sample (`isSample`) passes the guest's slowness (`timeout`) on as is, to be sampled again.
 */
async function guestStep<T>(
  app: PrimeApp['app'] | null,
  step: () => Promise<T>,
  isSample = false,
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!(err instanceof AppError) || (isSample && err.code === 'timeout')) throw err;
    throw new PrimeFailure(app, `the guest answered ${err.code}: ${err.message}`);
  }
}

import { z } from 'zod';

/**
 * GuestCallTiming is where a guest call's time went in the worker, in ms, each part measured on
 * the worker's own clock: `queued` (its enqueue to the lane's take: the API's clock against the
 * worker's, so only meaningful when both run on one machine), `target` (the request checked, the
 * live-claim lookup of reachDriveTarget, the guest's token opened), `guest` (request out to
 * answer in: the guest's own work and the way there and back), `check` (the answer checked
 * against the contract: the trust boundary), `store` (screenshots kept and the ActionRecord
 * written before the caller is told) and `worker` (take to outcome, all of it). What the API
 * measures around it (enqueue, wait) completes the way.
 */
export const GuestCallTiming = z.object({
  queued: z.number(),
  target: z.number().min(0),
  guest: z.number().min(0),
  check: z.number().min(0),
  store: z.number().min(0),
  worker: z.number().min(0),
});
export type GuestCallTiming = z.infer<typeof GuestCallTiming>;

/** ApiCallTiming is what the API adds: the call's way into the lane and its wait for the outcome. */
export interface ApiCallTiming {
  enqueue: number;
  wait: number;
}

const ms = (n: number) => Math.round(n * 100) / 100;

/**
 * serverTimingOf writes a call's parts as a `Server-Timing` header value
 * (`enqueue;dur=0.41, wait;dur=40, lane;dur=6, …`), the API's parts first, then the worker's.
 * `lane` is the wait the worker did not account for (the lane's wake and take, the outcome
 * written and its way back through Redis), clock-independent. An outcome without timing (a
 * worker of the version before, or a failure before the call reached its guest) gives only the
 * API's parts.
 */
export function serverTimingOf(api: ApiCallTiming, worker: GuestCallTiming | undefined): string {
  const parts: [string, number][] = [
    ['enqueue', api.enqueue],
    ['wait', api.wait],
  ];
  if (worker) {
    parts.push(['lane', Math.max(0, api.wait - worker.worker)]);
    for (const key of ['queued', 'target', 'guest', 'check', 'store', 'worker'] as const)
      parts.push([key, worker[key]]);
  }
  return parts.map(([name, dur]) => `${name};dur=${ms(dur)}`).join(', ');
}

import type { WaitForRequest, WaitForResult } from '@cubicle/contract/api';
import type { GuestOperation } from '@cubicle/contract/guest';
import { VerifyStateResponse } from '@cubicle/contract/guest';

/** GuestCall runs one guest operation on the caller's claim (GuestCalls.call, bound to it). */
export type GuestCall = (
  operation: GuestOperation,
  request: Record<string, unknown>,
) => Promise<unknown>;

/** How often `text` and `stable` look again; `element` leaves sampling to the guest's verify. */
const POLL_MS = 150;
/** Screenshots compared for `stable` are this small: cheap to take, still show a change. */
const STABLE_SAMPLE_DIMENSION = 256;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * waitFor is the MCP `wait_for` tool: it waits with the claim's own guest calls (the ones REST
 * verify and screenshot make), never with anything of its own in the guest. `element` is one
 * verify_state that samples until the timeout; `text` alternates two one-sample verifies (name
 * contains, value contains: a predicate list means all of them); `stable` compares small
 * screenshots until one has stayed the same for `stable_ms`.
 */
export async function waitFor(call: GuestCall, request: WaitForRequest): Promise<WaitForResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const result = (satisfied: boolean, samples: number): WaitForResult => ({
    satisfied,
    waited_ms: Math.round(elapsed()),
    samples,
  });
  switch (request.until) {
    case 'element': {
      const verdict = VerifyStateResponse.parse(
        await call('verify_state', {
          window_id: request.window_id,
          predicates: [{ kind: 'element_exists', selector: request.selector }],
          timeout_ms: request.timeout_ms,
        }),
      );
      return result(verdict.status === 'satisfied', verdict.samples);
    }
    case 'text': {
      let samples = 0;
      for (;;) {
        for (const selector of [
          { name_contains: request.text },
          { value_contains: request.text },
        ]) {
          samples++;
          const verdict = VerifyStateResponse.parse(
            await call('verify_state', {
              window_id: request.window_id,
              predicates: [{ kind: 'element_exists', selector }],
              timeout_ms: 0,
            }),
          );
          if (verdict.status === 'satisfied') return result(true, samples);
        }
        if (elapsed() >= request.timeout_ms) return result(false, samples);
        await sleep(Math.min(POLL_MS, Math.max(0, request.timeout_ms - elapsed())));
      }
    }
    case 'stable': {
      let samples = 0;
      let last: string | undefined;
      let sameSince = 0;
      for (;;) {
        const shot = (await call('screenshot', {
          format: 'png',
          max_dimension: STABLE_SAMPLE_DIMENSION,
          ...(request.window_id !== undefined ? { window_id: request.window_id } : {}),
        })) as { data: string };
        samples++;
        if (shot.data !== last) {
          last = shot.data;
          sameSince = elapsed();
        } else if (elapsed() - sameSince >= request.stable_ms) return result(true, samples);
        if (elapsed() >= request.timeout_ms) return result(false, samples);
        await sleep(Math.min(POLL_MS, request.stable_ms / 2));
      }
    }
    default:
      return request satisfies never;
  }
}

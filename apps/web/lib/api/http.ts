// The SDK client for the API, without Next imports: the proxy (embed CSP) uses it as well as pages.
import { Cubicle } from '@cubicle/sdk';
import { getEnv } from '../env';

export { CubicleError as ApiError } from '@cubicle/sdk';

/**
 * cubicleFor returns an SDK client with the session's key (null: calls that need no key, such as
 * ticket introspection); the key stays in this process. Answers are never cached by Next.
 */
export function cubicleFor(apiKey: string | null): Cubicle {
  return new Cubicle({
    baseUrl: getEnv().CUBICLE_API_URL,
    apiKey,
    timeoutMs: 130_000,
    init: { cache: 'no-store' },
  });
}

// Plain HTTP to the API, without Next imports: the proxy (embed CSP) uses it as well as pages.
import { getEnv } from '../env';

/** ApiError is a non-2xx answer of the API, carrying its stable error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** Answer 401 by throwing instead of sending the user to sign in (sign-in itself checks keys). */
  isSignIn?: boolean;
}

/** rawCall sends one request to the API with the session's key; the key stays in this process. */
export async function rawCall(apiKey: string | null, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${getEnv().CUBICLE_API_URL}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    cache: 'no-store',
    signal: AbortSignal.timeout(130_000),
  });
}

/** errorOf reads the API's error envelope (or makes one up for a body that is not one). */
export async function errorOf(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => null)) as {
    error?: { code?: string; message?: string };
  } | null;
  return new ApiError(
    response.status,
    body?.error?.code ?? 'unexpected_response',
    body?.error?.message ?? `the API answered ${response.status}`,
  );
}

import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { AddressRefusal, hostOf, resolveDeliverable } from './address-guard.js';

/** Only this much of a receiver's answer is read and kept (it is for a human reading the log). */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface PostWebhookInput {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
}

export type PostOutcome =
  | { kind: 'answered'; statusCode: number; excerpt: string; durationMs: number }
  /** No HTTP answer: timeout, refused connection, TLS failure… Retried. */
  | { kind: 'failed'; error: string; durationMs: number }
  /** The host is (or resolved to) an address webhooks may not reach. Not retried. */
  | { kind: 'refused'; error: string; durationMs: number };

/**
 * postWebhook sends one attempt. The host is resolved and checked here, and the connection goes
 * to exactly the checked address (the request's `lookup` answers with it), so a name that
 * resolves differently a moment later (DNS rebinding) cannot slip a private address in. No
 * redirects are followed; the whole attempt is bounded by `timeoutMs`; only a short excerpt of
 * the response body is read.
 */
export async function postWebhook(input: PostWebhookInput): Promise<PostOutcome> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  const url = new URL(input.url);
  let resolved;
  try {
    resolved = await resolveDeliverable(hostOf(url), input.allowPrivate);
  } catch (err) {
    if (err instanceof AddressRefusal)
      return err.kind === 'unresolvable'
        ? { kind: 'failed', error: err.message, durationMs: elapsed() }
        : { kind: 'refused', error: err.message, durationMs: elapsed() };
    throw err;
  }
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [resolved]);
    else callback(null, resolved.address, resolved.family);
  };
  const options: RequestOptions = {
    method: 'POST',
    lookup: pinned,
    headers: {
      ...input.headers,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(input.body)),
      'user-agent': 'Cubicle-Webhooks/1',
    },
    signal: AbortSignal.timeout(input.timeoutMs),
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostOutcome>((resolve) => {
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        const excerpt = Buffer.concat(chunks)
          .subarray(0, RESPONSE_EXCERPT_BYTES)
          .toString('utf8')
          // PostgreSQL text cannot hold NUL.
          .replaceAll('\u0000', '');
        resolve({
          kind: 'answered',
          statusCode: res.statusCode ?? 0,
          excerpt,
          durationMs: elapsed(),
        });
      };
      res.on('data', (chunk: Buffer) => {
        if (size >= RESPONSE_EXCERPT_BYTES) return;
        chunks.push(chunk);
        size += chunk.length;
        // Enough for the excerpt: the rest of the body is not read (the socket is closed).
        if (size >= RESPONSE_EXCERPT_BYTES) {
          finish();
          res.destroy();
        }
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    req.on('error', (err: Error & { code?: string }) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
      resolve({
        kind: 'failed',
        error: timedOut
          ? `no answer within ${input.timeoutMs} ms`
          : `${err.code ?? err.name}: ${err.message}`.slice(0, 300),
        durationMs: elapsed(),
      });
    });
    req.end(input.body);
  });
}

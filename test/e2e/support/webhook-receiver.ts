import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  /** The JSON body, as the receiver parsed it. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** An answer the receiver gives to its n-th request (1-based): a status and body, or silence. */
export type ReceiverAnswer = { status: number; body?: string } | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  /** The same receiver by name (`localhost`), for address checks after DNS resolution. */
  localhostUrl: string;
  received: ReceivedWebhook[];
  /** Sets how the receiver answers each request (default: 200). */
  answer(fn: (n: number) => ReceiverAnswer): void;
  /** Waits until `count` requests matched `filter`, then returns them. */
  waitFor(
    count: number,
    filter?: (w: ReceivedWebhook) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedWebhook[]>;
  /** verify checks a request's signature with the independent `standardwebhooks` package. */
  verify(w: ReceivedWebhook, secret: string): unknown;
  close(): Promise<void>;
}

/** startWebhookReceiver runs a loopback HTTP server that records every webhook it receives. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging = new Set<ServerResponse>();
  let answerOf: (n: number) => ReceiverAnswer = () => ({ status: 200 });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ headers, body, payload: JSON.parse(body) as ReceivedWebhook['payload'] });
      const answer = answerOf(received.length);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? 'ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    localhostUrl: `http://localhost:${port}/hook`,
    received,
    answer(fn) {
      answerOf = fn;
    },
    async waitFor(count, filter = () => true, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter(filter);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline)
          throw new Error(
            `received ${matching.length} of ${count} webhooks within ${timeoutMs} ms (${received.length} in all)`,
          );
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    verify(w, secret) {
      return new Webhook(secret).verify(w.body, w.headers);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

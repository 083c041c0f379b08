import { once } from 'node:events';
import WebSocket from 'ws';
import { refusedUpgrade as refusedStreamUpgrade } from '../../../test/harness/refused-upgrade.js';

export interface OpenStream {
  ws: WebSocket;
  /** Bytes received from the proxy so far. */
  received(): Buffer;
  /** Resolves with the close code and reason, and when the close happened (ms since epoch). */
  closed: Promise<{ code: number; reason: string; at: number }>;
}

const streamUrl = (base: string, ticket: string) =>
  `${base.replace(/^http/, 'ws')}/v1/viewer/stream?ticket=${encodeURIComponent(ticket)}`;

/** openStream connects like noVNC does (subprotocol `binary`) and waits for the upgrade. */
export async function openStream(base: string, ticket: string): Promise<OpenStream> {
  const ws = new WebSocket(streamUrl(base, ticket), ['binary']);
  const chunks: Buffer[] = [];
  ws.on('message', (data: Buffer) => chunks.push(data));
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    ws.once('close', (code, reason) =>
      resolve({ code, reason: reason.toString(), at: Date.now() }),
    ),
  );
  await Promise.race([
    once(ws, 'open'),
    once(ws, 'unexpected-response').then(() => {
      throw new Error('the upgrade was refused');
    }),
  ]);
  return { ws, received: () => Buffer.concat(chunks), closed };
}

/** refusedUpgrade tries to connect and returns the HTTP answer that refused the upgrade. */
export const refusedUpgrade = (base: string, ticket: string) =>
  refusedStreamUpgrade(streamUrl(base, ticket));

/** waitFor polls a condition until it holds or the bound passes (then it throws). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

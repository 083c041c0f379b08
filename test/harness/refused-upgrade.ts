import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';

/**
 * refusedUpgrade opens a WebSocket like noVNC does (subprotocol `binary`) and returns the HTTP
 * answer that refused the upgrade; it throws when the upgrade is accepted. For the stream
 * proxy's "401 before the upgrade" checks (API integration and e2e suites).
 */
export async function refusedUpgrade(
  url: string,
): Promise<{ status: number; body: { error: { code: string; details?: unknown } } }> {
  const ws = new WebSocket(url, ['binary']);
  ws.on('error', () => undefined);
  const [, res] = (await Promise.race([
    once(ws, 'unexpected-response'),
    once(ws, 'open').then(() => {
      ws.terminate();
      throw new Error('the upgrade was accepted');
    }),
  ])) as [unknown, IncomingMessage];
  let text = '';
  for await (const chunk of res) text += chunk;
  ws.terminate();
  return { status: res.statusCode ?? 0, body: JSON.parse(text) };
}

import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ShellStreamServerMessage } from '@cubicle/contract/guest';
import { auth, buildGuest, isAlive } from './helpers/build-guest.js';

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildGuest();
});
afterEach(async () => {
  await app.close();
});

/** open connects to the stream and records every server message (validated by the contract). */
async function open() {
  const messages: ShellStreamServerMessage[] = [];
  let closed!: () => void;
  const isClosed = new Promise<void>((resolve) => (closed = resolve));
  const ws: WebSocket = await app.injectWS(
    '/v1/shell/stream',
    { headers: auth },
    {
      onInit: (socket) => {
        socket.on('message', (raw) =>
          messages.push(ShellStreamServerMessage.parse(JSON.parse(raw.toString()))),
        );
        socket.on('close', () => closed());
      },
    },
  );
  const send = (m: unknown) => ws.send(JSON.stringify(m));
  const waitFor = async (pred: (m: ShellStreamServerMessage) => boolean) => {
    for (let i = 0; i < 400; i += 1) {
      const hit = messages.find(pred);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no such message among ${JSON.stringify(messages)}`);
  };
  return { ws, messages, send, waitFor, isClosed };
}

describe('shell.stream', () => {
  it('streams stdin to the command and its output back, then exit, then closes', async () => {
    const s = await open();
    s.send({ type: 'start', request: { command: 'cat; echo done >&2' } });
    // Sent before `started` arrives: the driver queues it until the process exists.
    s.send({ type: 'stdin', data: 'héllo ' });
    const started = await s.waitFor((m) => m.type === 'started');
    s.send({ type: 'stdin', data: Buffer.from('wörld').toString('base64'), encoding: 'base64' });
    s.send({ type: 'stdin_end' });
    const exit = await s.waitFor((m) => m.type === 'exit');
    await s.isClosed;
    expect(exit).toMatchObject({ exit_code: 0, timed_out: false, killed: false });
    expect(started.type === 'started' && started.pid).toBe(exit.type === 'exit' && exit.pid);
    const out = s.messages
      .filter((m) => m.type === 'stdout')
      .map((m) => (m.type === 'stdout' ? m.data : ''))
      .join('');
    expect(out).toBe('héllo wörld');
    expect(s.messages.some((m) => m.type === 'stderr' && m.data === 'done\n')).toBe(true);
    const seqs = s.messages.flatMap((m) =>
      m.type === 'stdout' || m.type === 'stderr' ? [m.seq] : [],
    );
    expect(seqs).toEqual(seqs.map((_, i) => i));
  });

  it('kill message signals the group; the exit says killed', async () => {
    const s = await open();
    s.send({ type: 'start', request: { argv: ['sleep', '30'] } });
    await s.waitFor((m) => m.type === 'started');
    s.send({ type: 'kill', signal: 'SIGKILL' });
    const exit = await s.waitFor((m) => m.type === 'exit');
    expect(exit).toMatchObject({ killed: true, signal: 'SIGKILL', exit_code: null });
  });

  it('a timeout kills the group and says so', async () => {
    const s = await open();
    s.send({ type: 'start', request: { command: 'echo tick; sleep 30', timeout_ms: 300 } });
    const exit = await s.waitFor((m) => m.type === 'exit');
    expect(exit).toMatchObject({ timed_out: true, signal: 'SIGTERM' });
    expect(s.messages.some((m) => m.type === 'stdout' && m.data === 'tick\n')).toBe(true);
  });

  it('closing the socket kills the command', async () => {
    const s = await open();
    s.send({ type: 'start', request: { argv: ['sleep', '30'] } });
    const started = await s.waitFor((m) => m.type === 'started');
    s.ws.terminate();
    const pid = started.type === 'started' ? started.pid : 0;
    for (let i = 0; i < 100 && isAlive(pid); i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(isAlive(pid)).toBe(false);
  });

  it('answers bad messages with an error frame and closes', async () => {
    const notJson = await open();
    notJson.ws.send('{oops');
    expect(await notJson.waitFor((m) => m.type === 'error')).toMatchObject({
      error: { code: 'invalid_json' },
    });
    await notJson.isClosed;

    const early = await open();
    early.send({ type: 'stdin', data: 'x' });
    expect(await early.waitFor((m) => m.type === 'error')).toMatchObject({
      error: { code: 'conflict' },
    });

    const invalid = await open();
    invalid.send({ type: 'start', request: { argv: [] } });
    expect(await invalid.waitFor((m) => m.type === 'error')).toMatchObject({
      error: { code: 'validation_failed' },
    });

    const missing = await open();
    missing.send({ type: 'start', request: { argv: ['/nonexistent/program'] } });
    expect(await missing.waitFor((m) => m.type === 'error')).toMatchObject({
      error: { code: 'not_found' },
    });
  });
});

import { StringDecoder } from 'node:string_decoder';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { ShellStreamClientMessage, type ShellStreamServerMessage } from '@cubicle/contract/guest';
import { isAppError, type ErrorCodeName } from '@cubicle/contract/errors';
import type { WebSocket } from 'ws';
import type { GuestDeps } from '../server/deps.js';
import { errorBody } from '@cubicle/http';
import type { RunRegistry } from './run-registry.js';
import { startRun, type RunHandle } from './start-run.js';

/** Above this many unsent bytes on the socket the process's pipes pause (backpressure). */
const HIGH_WATER_BYTES = 1024 * 1024;
const DRAIN_POLL_MS = 20;

/**
 * streamShell runs one command per WebSocket: the first client message must be `start`, then
 * `stdin`, `stdin_end` and `kill`. Output goes out as numbered chunks, then one `exit` (or
 * `error`), and the driver closes the socket. A client that goes away kills the process group.
 * The message listener is attached before anything awaits, so no early frame is lost.
 */
export function streamShell(
  socket: WebSocket,
  requestId: string,
  runs: RunRegistry,
  deps: GuestDeps,
) {
  let run: RunHandle | null = null;
  let starting = false;
  let finished = false;
  let seq = 0;
  // Input sent right after `start` arrives while the process is still spawning; it waits here.
  const pending: ShellStreamClientMessage[] = [];

  // What one turn of the event loop sends goes out in one write: a turn on a busy machine reads
  // many chunks (16 chatty runs, each its own socket and pipes), and a write per chunk was most
  // of what a run event cost this process and the reader at the other end. Uncorked once the
  // turn's I/O callbacks are done (setImmediate), so a chunk waits for no later read.
  const tcp = (socket as unknown as { _socket?: Socket })._socket;
  let corked = false;
  const send = (message: ShellStreamServerMessage) => {
    if (socket.readyState !== socket.OPEN) return;
    if (tcp && !corked) {
      corked = true;
      tcp.cork();
      setImmediate(() => {
        corked = false;
        tcp.uncork();
      });
    }
    socket.send(JSON.stringify(message));
  };
  const fail = (code: ErrorCodeName, message: string, details?: Record<string, unknown>) => {
    if (finished) return;
    finished = true;
    send({ type: 'error', error: errorBody(requestId, code, message, details) });
    socket.close(1000);
  };

  const pipe = (stream: Readable, type: 'stdout' | 'stderr', encoding: 'utf8' | 'base64') => {
    const decoder = new StringDecoder('utf8');
    const emit = (data: string) => {
      if (data !== '') send({ type, seq: seq++, data, encoding });
    };
    stream.on('data', (chunk: Buffer) => {
      emit(encoding === 'utf8' ? decoder.write(chunk) : chunk.toString('base64'));
      if (socket.bufferedAmount > HIGH_WATER_BYTES) {
        stream.pause();
        const wait = setInterval(() => {
          if (socket.bufferedAmount <= HIGH_WATER_BYTES || socket.readyState !== socket.OPEN) {
            clearInterval(wait);
            stream.resume();
          }
        }, DRAIN_POLL_MS);
      }
    });
    stream.on('end', () => {
      if (encoding === 'utf8') emit(decoder.end());
    });
    stream.on('error', () => undefined);
  };

  const start = async (
    request: Extract<ShellStreamClientMessage, { type: 'start' }>['request'],
  ) => {
    starting = true;
    try {
      if (request.run_id) runs.reserve(request.run_id);
      try {
        run = await startRun(request, { baseEnv: deps.childEnv, interactiveStdin: true });
      } finally {
        if (request.run_id) runs.release(request.run_id);
      }
    } catch (err) {
      if (isAppError(err)) return fail(err.code, err.message, err.details);
      return fail('internal_error', 'could not start the command');
    }
    runs.add(run);
    // The socket closed while we were spawning: nothing may outlive it.
    if (socket.readyState !== socket.OPEN) run.kill('SIGKILL');
    send({ type: 'started', run_id: run.runId, pid: run.pid });
    if (request.stdin !== undefined) run.writeStdin(Buffer.from(request.stdin));
    pipe(run.stdout, 'stdout', request.output_encoding);
    pipe(run.stderr, 'stderr', request.output_encoding);
    for (const message of pending.splice(0)) control(run, message);
    const exit = await run.done;
    if (finished) return;
    finished = true;
    send({ type: 'exit', ...exit });
    socket.close(1000);
  };

  const control = (handle: RunHandle, message: ShellStreamClientMessage) => {
    switch (message.type) {
      case 'start':
        return;
      case 'stdin':
        handle.writeStdin(Buffer.from(message.data, message.encoding));
        return;
      case 'stdin_end':
        handle.endStdin();
        return;
      case 'kill':
        handle.kill(message.signal, 'kill', message.grace_ms);
        return;
      default:
        message satisfies never;
    }
  };

  socket.on('message', (raw, isBinary) => {
    if (finished) return;
    let parsed: ReturnType<typeof ShellStreamClientMessage.safeParse>;
    try {
      parsed = ShellStreamClientMessage.safeParse(isBinary ? null : JSON.parse(raw.toString()));
    } catch {
      return fail('invalid_json', 'messages must be JSON text frames');
    }
    if (!parsed.success) {
      return fail('validation_failed', 'invalid message', {
        issues: parsed.error.issues.map((i) => ({
          path: i.path.map(String).join('.'),
          message: i.message,
        })),
      });
    }
    const message = parsed.data;
    if (message.type === 'start') {
      if (starting) return fail('conflict', 'the stream already started a command');
      void start(message.request);
      return;
    }
    if (!starting) return fail('conflict', 'send `start` first');
    if (!run) pending.push(message);
    else control(run, message);
  });
  socket.on('close', () => {
    run?.kill('SIGKILL');
  });
  socket.on('error', () => undefined);
}

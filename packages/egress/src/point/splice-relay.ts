import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';

/**
 * takeBuffered stops a paused socket's reads and returns what Node had read past its consumer
 * (a paused net.Socket keeps reading up to its highWaterMark), so those bytes can be sent on
 * before the socket changes hands. Nothing more enters this process until reads start again.
 */
export function takeBuffered(socket: Socket): Buffer | null {
  const chunks: Buffer[] = [];
  for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null;)
    chunks.push(chunk);
  // read() may have started reads again: stop them last, in the same turn.
  const handle = (socket as unknown as { _handle?: SocketHandle })._handle;
  handle?.readStop?.();
  if (handle) handle.reading = false; // net.Socket's flag: a later resume() starts reads again
  return chunks.length > 0 ? Buffer.concat(chunks) : null;
}

/** A connection the relay holds: cut it when the policy no longer allows it. */
export interface RelayedConnection {
  /** cut resets the sandbox's side and closes the destination's (policy change, sandbox gone). */
  cut(): void;
  /** closed resolves once the relay has closed both sides. */
  readonly closed: Promise<void>;
}

interface Pending {
  took: (held: boolean) => void;
  closed: () => void;
}

type SocketHandle = { fd?: number; reading?: boolean; readStop?: () => number };

/**
 * SpliceRelay is the local egress point's kernel-assisted data path for spliced connections: a
 * small Go program of ours (scripts/tools/egress-relay) that takes a decided connection's socket
 * out of this process (pidfd_getfd), dials the destination and moves bytes with splice(2).
 * Node's own pipe copies each chunk through the heap and its event loop; on two cores shared
 * with the sandbox's client and the server that halved a download (bench:egress). The point
 * keeps every decision (policy, SNI, events, credential injection: bound hosts never come here);
 * the relay only moves bytes and cuts what the point tells it to. When the relay is missing,
 * exits or cannot take a socket, the point relays in Node as before (hand answers false).
 */
export class SpliceRelay {
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private alive = true;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {}

  /**
   * start runs the relay at `path` and waits for it to be ready; null when there is none or it
   * cannot run here (no pidfd_getfd: Linux before 5.6, no ptrace right over this process).
   */
  static async start(path: string, onError?: (err: unknown) => void): Promise<SpliceRelay | null> {
    if (!existsSync(path)) return null;
    const child = spawn(path, [String(process.pid)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {},
    });
    const relay = new SpliceRelay(child);
    // A relay that died takes no more work; its pipe's EPIPE must not become the point's crash.
    child.stdin.on('error', () => relay.stopped());
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + String(chunk)).slice(-2000)));
    const lines = createInterface({ input: child.stdout });
    const ready = new Promise<boolean>((resolve) => {
      child.once('error', (err) => {
        onError?.(err);
        resolve(false);
      });
      child.once('exit', (code, signal) => {
        relay.stopped();
        if (relay.closing) return resolve(false);
        onError?.(
          new Error(
            `egress relay exited (${signal ?? code}); Node relays instead: ${stderr.trim()}`,
          ),
        );
        resolve(false);
      });
      lines.once('line', (line) => resolve(line === 'ready'));
    });
    lines.on('line', (line) => relay.heard(line, onError));
    if (!(await ready)) {
      relay.close();
      return null;
    }
    // The relay dies with the point (its stdin closes); it must never keep this process alive.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as unknown as { unref?: () => void }).unref?.();
    return relay;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  private heard(line: string, onError?: (err: unknown) => void): void {
    const [word, id, why] = line.split(' ');
    const pending = id === undefined ? undefined : this.pending.get(id);
    if (!pending) return;
    if (word === 'took') pending.took(true);
    else if (word === 'failed') {
      this.pending.delete(id!);
      pending.took(false);
      // Not allowed to copy this process's descriptors (a container without CAP_SYS_PTRACE):
      // no later connection would do better, so Node relays them all from now on.
      if (why?.includes('pidfd_getfd')) {
        onError?.(new Error(`egress relay cannot take sockets (${why}); Node relays instead`));
        this.close();
      }
    } else if (word === 'closed') {
      this.pending.delete(id!);
      pending.closed();
    }
  }

  private closing = false;

  private send(line: string): void {
    if (this.alive && this.child.stdin.writable) this.child.stdin.write(line);
    else this.stopped();
  }

  private stopped(): void {
    this.alive = false;
    for (const pending of this.pending.values()) {
      pending.took(false);
      pending.closed();
    }
    this.pending.clear();
  }

  /**
   * hand gives a decided connection to the relay: `client`, the sandbox's socket (paused, every
   * byte it sent so far already written to `upstream`: see takeBuffered) and `upstream`, connected
   * and never read. On success the relay's handle is returned, and the caller closes this
   * process's copies (the relay holds descriptors of its own: closing them neither ends nor resets
   * anything); null when the relay did not take them (both untouched: relay them here).
   */
  async hand(client: Socket, upstream: Socket): Promise<RelayedConnection | null> {
    const fds = [client, upstream].map(
      (socket) => (socket as unknown as { _handle?: SocketHandle })._handle?.fd,
    );
    if (!this.alive || !fds.every((fd) => typeof fd === 'number' && fd >= 0)) return null;
    const id = String((this.next += 1));
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    const held = await new Promise<boolean>((took) => {
      this.pending.set(id, { took, closed });
      this.send(`splice ${id} ${fds[0]} ${fds[1]}\n`);
    });
    if (!held) return null;
    return {
      cut: () => {
        if (this.pending.has(id)) this.send(`cut ${id}\n`);
      },
      closed: done,
    };
  }

  /** close stops the relay; it resets every connection it holds. */
  close(): void {
    this.alive = false;
    this.closing = true;
    if (this.child.stdin.writable) this.child.stdin.end(); // it resets what it holds and exits
    const child = this.child;
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, 2_000).unref();
  }
}

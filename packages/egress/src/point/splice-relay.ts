import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { AcceptedConnection, HandBack, type PeekWaits } from './relay-accept.js';

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

interface Listening {
  judge: (connection: AcceptedConnection) => void;
  answered: (ok: boolean) => void;
}

/**
 * SpliceRelay is the local egress point's kernel-assisted data path: a small Go program of ours
 * (scripts/tools/egress-relay). For a link it serves (`listen`) it accepts the sandbox's
 * connections, reads their original destination and first bytes, and asks this process to judge
 * each (one line each way); an allowed connection is dialled and joined there, its bytes moved
 * with splice(2). Node's own accept, socket objects and pipe woke its event loop four times on a
 * handshake's path and copied each chunk through the heap (bench:egress: setup 1.41x direct,
 * half of direct throughput). The point keeps every decision (policy, peeking the SNI/Host from
 * the bytes it is sent, events, credentials: a bound host's connection is handed back here).
 * A connection Node accepted itself (a link served in Node) can still be handed over once it
 * carries a lot (`hand`: pidfd_getfd). When the relay is missing or exits, the point serves its
 * links in Node as before (onStop); when it cannot take sockets, Node keeps those it accepted.
 */
export class SpliceRelay {
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly listening = new Map<string, Listening>();
  private readonly unlistening = new Map<string, () => void>();
  private readonly stopHooks = new Set<() => void>();
  private readonly handBack = new HandBack();
  private alive = true;
  /** False once the relay was refused a descriptor of this process (pidfd_getfd). */
  private canTake = true;
  /** The relay serves links itself (`listen`): false for one built before it could. */
  private canListen = false;

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
      lines.once('line', (line) => {
        // A relay built from an older source (a stale tools link) only splices handed sockets.
        relay.canListen = line === 'ready listen';
        resolve(line === 'ready' || relay.canListen);
      });
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
    const fields = line.split(' ');
    const [word, id, why] = fields;
    if (word === 'judge' && fields.length === 9) return this.judged(fields);
    if (id !== undefined && this.listenHeard(word, id, why, onError)) return;
    const pending = id === undefined ? undefined : this.pending.get(id);
    if (!pending) return;
    if (word === 'took') pending.took(true);
    else if (word === 'failed') {
      this.pending.delete(id!);
      pending.took(false);
      // Not allowed to copy this process's descriptors (a container without CAP_SYS_PTRACE):
      // no later connection would do better, so Node keeps those it accepted from now on.
      if (why?.includes('pidfd_getfd') && this.canTake) {
        this.canTake = false;
        onError?.(new Error(`egress relay cannot take sockets (${why}); Node relays instead`));
      }
    } else if (word === 'closed') {
      this.pending.delete(id!);
      pending.closed();
    }
  }

  /** judged passes a `judge` line to its link's listener as an AcceptedConnection. */
  private judged(fields: string[]): void {
    const [, cid, lid, srcIp, srcPort, dstIp, dstPort, final, first] = fields;
    const listener = this.listening.get(lid!);
    const connection = new AcceptedConnection(
      cid!,
      { ip: srcIp!, port: Number(srcPort) },
      { ip: dstIp!, port: Number(dstPort) },
      Buffer.from(first!, 'base64'),
      final === '1',
      {
        send: (text) => this.send(text),
        track: (trackedId) => this.track(trackedId),
        handBack: this.handBack,
      },
    );
    // A link no longer served here (unlisten raced the connection): nothing may pass.
    if (!listener) return connection.refuse();
    listener.judge(connection);
  }

  /** listenHeard handles a link's `listening`/`unlistened`/`failed` line (true: it was one). */
  private listenHeard(
    word: string | undefined,
    lid: string,
    why: string | undefined,
    onError?: (err: unknown) => void,
  ): boolean {
    if (word === 'unlistened') {
      this.unlistening.get(lid)?.();
      this.unlistening.delete(lid);
      return true;
    }
    const listener = this.listening.get(lid);
    if (!listener || (word !== 'listening' && word !== 'failed')) return false;
    if (word === 'failed') {
      this.listening.delete(lid);
      onError?.(new Error(`egress relay cannot serve a link (${why}); Node serves it`));
    }
    listener.answered(word === 'listening');
    return true;
  }

  private track(id: string): RelayedConnection {
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    if (this.alive) this.pending.set(id, { took: () => undefined, closed });
    else closed();
    return {
      cut: () => {
        if (this.pending.has(id)) this.send(`cut ${id}\n`);
      },
      closed: done,
    };
  }

  /**
   * listen has the relay accept a link's connections on `ip:port` (the nftables redirect's
   * target) and ask `judge` about each; null when it cannot (then Node listens itself).
   */
  async listen(
    ip: string,
    port: number,
    waits: PeekWaits,
    judge: (connection: AcceptedConnection) => void,
  ): Promise<string | null> {
    if (!this.alive || !this.canListen) return null;
    const lid = `l${(this.next += 1)}`;
    const ok = await new Promise<boolean>((answered) => {
      this.listening.set(lid, { judge, answered });
      this.send(
        `listen ${lid} ${ip} ${port} ${waits.webPorts.join(',')} ${waits.webMs} ${waits.otherMs}\n`,
      );
    });
    return ok ? lid : null;
  }

  /** unlisten stops a link's listener (its connections go on until cut); resolves once closed. */
  unlisten(lid: string): Promise<void> {
    const listener = this.listening.get(lid);
    this.listening.delete(lid);
    if (!listener || !this.alive) return Promise.resolve();
    return new Promise((resolve) => {
      this.unlistening.set(lid, resolve);
      this.send(`unlisten ${lid}\n`);
    });
  }

  /** onStop runs `hook` once when the relay stops (its links must be served in Node); unsubscribe. */
  onStop(hook: () => void): () => void {
    this.stopHooks.add(hook);
    return () => this.stopHooks.delete(hook);
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
    for (const listener of this.listening.values()) listener.answered(false);
    this.listening.clear();
    for (const resolve of this.unlistening.values()) resolve();
    this.unlistening.clear();
    this.handBack.close();
    const hooks = [...this.stopHooks];
    this.stopHooks.clear();
    for (const hook of hooks) hook();
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
    if (!this.alive || !this.canTake || !fds.every((fd) => typeof fd === 'number' && fd >= 0))
      return null;
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
    this.stopHooks.clear(); // stopping on purpose: nobody takes its links over
    this.alive = false;
    this.closing = true;
    if (this.child.stdin.writable) this.child.stdin.end(); // it resets what it holds and exits
    const child = this.child;
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, 2_000).unref();
  }
}

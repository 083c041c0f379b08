import {
  SHELL_MAX_TIMEOUT_MS,
  type ShellExit,
  type ShellStreamClientMessage,
} from '@cubicle/contract/guest';
import { sqlOf } from '@cubicle/db';
import { markRunStarted } from '../repositories/runs.js';
import WebSocket from 'ws';
import type { GuestClient } from '../guest/guest-client.js';
import { cleanText } from './append-run-events.js';
import { finishRun, type RunOutcome } from './finish-run.js';
import { RunEventLog } from './run-event-log.js';
import type { RunDeps } from '../resources.js';
import { outcomeOfExit, outcomeOfLostStream, type EndRequest } from './run-outcome.js';
import type { StreamRedactor } from '../secrets/redact.js';
import { passThrough } from './run-secrets.js';
import { parseShellMessage } from './shell-message.js';
import type { RunRow } from '../repositories/runs-rows.js';

/** Between the SIGINT (or SIGTERM) Cubicle sends and the SIGKILL that follows. */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** A guest that has not said `started` by then is treated as unable to start the run. */
const START_TIMEOUT_MS = 30_000;

export interface LiveRunOptions {
  deps: RunDeps;
  row: RunRow;
  workerId: string;
  /** The claim's guest: the shell stream is opened through it (token, peer-checked socket). */
  guest: GuestClient;
  env: Record<string, string>;
  /** A fresh redactor per output stream (a value split across chunks stays in one stream). */
  redactor: () => StreamRedactor;
  onEnded: (run: LiveRun) => void;
}

/**
 * LiveRun holds one run's guest shell stream in the worker: it sends `start`, turns output into
 * redacted events in the run's event log, forwards stdin and kills, and records the end. The
 * guest kills the process group when the stream closes, so a worker that dies takes its runs'
 * processes with it (the run ends `worker_lost`, never replayed; see RunSupervisor).
 */
export class LiveRun {
  readonly id: string;
  readonly claimId: string;
  private socket: WebSocket | null = null;
  private readonly log: RunEventLog;
  private readonly redactors = { stdout: passThrough, stderr: passThrough };
  private requested: EndRequest | null = null;
  private exit: (ShellExit & { type: 'exit' }) | null = null;
  private ended = false;
  private timer: NodeJS.Timeout | undefined;
  /** Resolves once the guest answered `started` (true) or the start failed (false). */
  readonly started: Promise<boolean>;
  private resolveStarted!: (ok: boolean) => void;
  private isRunning = false;
  private readonly early: ShellStreamClientMessage[] = [];

  constructor(private readonly options: LiveRunOptions) {
    this.id = options.row.id;
    this.claimId = options.row.claim_id;
    this.started = new Promise((resolve) => (this.resolveStarted = resolve));
    this.log = new RunEventLog(options.deps, this.id, (pause) => {
      // Output faster than the database takes it: stop reading the socket; the guest then
      // stops reading the process's pipes, and the process blocks on write. Nothing is dropped.
      if (pause) this.socket?.pause();
      else this.socket?.resume();
    });
    this.redactors.stdout = options.redactor();
    this.redactors.stderr = options.redactor();
  }

  /**
   * open connects to the guest (the guest client's shell stream) and sends `start`; messages are
   * handled before any await.
   */
  open() {
    const { row } = this.options;
    const socket = this.options.guest.stream('shell.stream', { maxPayload: 16 * 1024 * 1024 });
    this.socket = socket;
    socket.on('message', (raw) => this.onMessage(raw.toString()));
    // Never an unhandled rejection (it would stop the worker): a failed end is left to the
    // lease sweep, which records it once this worker stops renewing the run.
    socket.on('close', () => void this.onClose().catch(() => undefined));
    socket.on('error', () => undefined);
    const timeoutMs = row.timeout_seconds * 1000;
    socket.on('open', () => {
      this.send({
        type: 'start',
        request: {
          run_id: row.id,
          argv: row.argv,
          ...(row.cwd ? { cwd: row.cwd } : {}),
          env: this.options.env,
          timeout_ms: Math.min(timeoutMs, SHELL_MAX_TIMEOUT_MS),
          output_encoding: 'utf8',
        },
      });
      for (const message of this.early.splice(0)) this.send(message);
    });
    // The guest's own timer stops at its maximum; a longer run is timed out from here.
    if (timeoutMs > SHELL_MAX_TIMEOUT_MS)
      this.timer = setTimeout(() => this.requestEnd({ kind: 'timeout' }, 'SIGTERM'), timeoutMs);
    setTimeout(() => {
      if (!this.isRunning && !this.ended) socket.terminate();
    }, START_TIMEOUT_MS).unref();
  }

  private send(message: ShellStreamClientMessage) {
    const socket = this.socket;
    if (!socket) return;
    // Input that comes before the socket is open follows `start` in order (the guest holds it
    // until the process exists).
    if (socket.readyState === WebSocket.CONNECTING && message.type !== 'start')
      this.early.push(message);
    else if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  /** write forwards input to the process (queued by the guest until the process exists). */
  write(message: Extract<ShellStreamClientMessage, { type: 'stdin' | 'stdin_end' }>) {
    this.send(message);
  }

  /**
   * requestEnd asks the process group to stop (signal, then SIGKILL after the grace period) and
   * remembers why, so the end is recorded with that reason. The first reason wins.
   */
  requestEnd(
    request: EndRequest,
    signal: 'SIGINT' | 'SIGTERM' | 'SIGKILL' = 'SIGINT',
    graceMs = DEFAULT_KILL_GRACE_MS,
  ) {
    if (this.ended) return;
    this.requested ??= request;
    this.send({ type: 'kill', signal, grace_ms: graceMs });
  }

  get endRequested(): EndRequest | null {
    return this.requested;
  }

  private onMessage(text: string) {
    const message = parseShellMessage(text);
    // Outside the protocol: ignored (the exit or the close still ends the run).
    if (!message) return;
    switch (message.type) {
      case 'started':
        void this.onStarted(message.pid).catch(() =>
          this.requestEnd({ kind: 'cancel' }, 'SIGKILL', 0),
        );
        return;
      case 'stdout':
      case 'stderr': {
        const redacted = this.redactors[message.type].push(message.data);
        if (redacted !== '')
          this.log.add(
            { type: message.type, data: { text: cleanText(redacted) } },
            redacted.length,
          );
        return;
      }
      case 'exit':
        this.exit = message;
        return;
      case 'error':
        void this.end(
          { status: 'failed', reason: 'start_failed', detail: message.error.message },
          [],
        ).catch(() => undefined);
        return;
      default:
        message satisfies never;
    }
  }

  /**
   * onStarted records the start. The `running` event is queued at once so it precedes the
   * output that follows it; the row moves to running only if the run is still this worker's
   * and queued — one ended meanwhile (cancelled, swept) is killed at once.
   */
  private async onStarted(pid: number) {
    this.isRunning = true;
    this.log.add({ type: 'status', data: { status: 'running', pid } });
    const started = await sqlOf(this.options.deps.db).row(
      markRunStarted,
      this.id,
      this.options.workerId,
    );
    if (!started) {
      this.requestEnd({ kind: 'cancel' }, 'SIGKILL', 0);
      this.resolveStarted(false);
      return;
    }
    this.resolveStarted(true);
  }

  private async onClose() {
    clearTimeout(this.timer);
    for (const type of ['stdout', 'stderr'] as const) {
      const rest = this.redactors[type].end();
      if (rest !== '') this.log.add({ type, data: { text: cleanText(rest) } }, rest.length);
    }
    const exit = this.exit;
    if (exit) {
      const { run_id: _runId, pid: _pid, killed: _killed, type: _type, ...data } = exit;
      await this.end(outcomeOfExit(exit, this.requested), [{ type: 'exit', data }]);
    } else await this.end(outcomeOfLostStream(this.requested), []);
  }

  private async end(
    outcome: RunOutcome,
    before: { type: 'exit'; data: Record<string, unknown> }[],
  ) {
    if (this.ended) return;
    this.ended = true;
    this.resolveStarted(false);
    try {
      await this.log.flush();
      await finishRun(this.options.deps, this.id, outcome, before);
    } finally {
      this.socket?.terminate();
      this.options.onEnded(this);
    }
  }

  /** abandon drops the stream at once (the run was ended elsewhere); the guest kills the group. */
  abandon() {
    this.ended = true;
    this.resolveStarted(false);
    this.socket?.terminate();
    this.options.onEnded(this);
  }
}

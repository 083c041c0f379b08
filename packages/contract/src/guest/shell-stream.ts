import { z } from 'zod';
import { ErrorBody } from '../errors/envelope.js';
import { named } from '../registry.js';
import {
  OutputEncoding,
  SHELL_STDIN_MAX_BYTES,
  ShellExit,
  ShellRunId,
  ShellRunRequest,
  ShellSignal,
} from './shell.js';
import { Pid } from './common.js';

/**
 * ShellStreamClientMessage is what a client sends on the shell WebSocket. The first message must
 * be `start`; then `stdin` chunks, `stdin_end` to close stdin, and `kill`. Closing the socket
 * kills the run's process group, so an abandoned stream leaves nothing running.
 */
export const ShellStreamClientMessage = named(
  'GuestShellStreamClientMessage',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('start'), request: ShellRunRequest }),
    z.strictObject({
      type: z.literal('stdin'),
      data: z.string().max(SHELL_STDIN_MAX_BYTES),
      encoding: OutputEncoding.default('utf8'),
    }),
    z.strictObject({ type: z.literal('stdin_end') }),
    z.strictObject({
      type: z.literal('kill'),
      signal: ShellSignal.default('SIGTERM'),
      /** After this long a group that is still alive gets SIGKILL (default: the driver's 2 s). */
      grace_ms: z.int().min(0).max(60_000).optional(),
    }),
  ]),
);
export type ShellStreamClientMessage = z.infer<typeof ShellStreamClientMessage>;

/**
 * ShellStreamServerMessage is what the driver sends: `started` once, output chunks in order
 * (`seq` counts all chunks of both streams from 0, so a client can interleave them exactly as
 * produced), then exactly one `exit` or `error`, after which the driver closes the socket.
 * Streamed output is not capped; backpressure pauses the process's pipes instead.
 */
export const ShellStreamServerMessage = named(
  'GuestShellStreamServerMessage',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('started'), run_id: ShellRunId, pid: Pid }),
    z.strictObject({
      type: z.literal('stdout'),
      seq: z.int().min(0),
      data: z.string(),
      encoding: OutputEncoding,
    }),
    z.strictObject({
      type: z.literal('stderr'),
      seq: z.int().min(0),
      data: z.string(),
      encoding: OutputEncoding,
    }),
    ShellExit.extend({ type: z.literal('exit') }),
    z.strictObject({ type: z.literal('error'), error: ErrorBody }),
  ]),
);
export type ShellStreamServerMessage = z.infer<typeof ShellStreamServerMessage>;

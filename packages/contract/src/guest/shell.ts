import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { AbsolutePath, Argv, DurationMs, EnvVars, Pid } from './common.js';

/** SHELL_OUTPUT_MAX_BYTES caps each collected stream; the rest is dropped and flagged. */
export const SHELL_OUTPUT_MAX_BYTES = 1024 * 1024;
export const SHELL_STDIN_MAX_BYTES = 1024 * 1024;
export const SHELL_DEFAULT_TIMEOUT_MS = 60_000;
export const SHELL_MAX_TIMEOUT_MS = 3_600_000;

/** ShellRunId names a run so another request (or the stream) can kill it while it runs. */
export const ShellRunId = named(
  'GuestShellRunId',
  z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, '1–64 letters, digits, _ or -'),
);
export type ShellRunId = z.infer<typeof ShellRunId>;

export const ShellSignal = named(
  'GuestShellSignal',
  z.enum(['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']),
);
export type ShellSignal = z.infer<typeof ShellSignal>;

/**
 * OutputEncoding: `utf8` decodes output as text (invalid sequences become U+FFFD, and streamed
 * chunks never split a character); `base64` returns the exact bytes.
 */
export const OutputEncoding = named('GuestOutputEncoding', z.enum(['utf8', 'base64']));
export type OutputEncoding = z.infer<typeof OutputEncoding>;

const runFields = {
  /** Chosen by the caller to kill the run later; the driver makes one up otherwise. */
  run_id: ShellRunId.optional(),
  cwd: AbsolutePath.optional(),
  env: EnvVars.optional(),
  /** On timeout the whole process group is killed (SIGTERM, then SIGKILL) and `timed_out` set. */
  timeout_ms: z.int().min(1).max(SHELL_MAX_TIMEOUT_MS).default(SHELL_DEFAULT_TIMEOUT_MS),
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  stdin: z.string().max(SHELL_STDIN_MAX_BYTES).optional(),
  output_encoding: OutputEncoding.default('utf8'),
};

/**
 * ShellRunRequest runs exactly one of `argv` (exec'd directly, no shell parsing) or `command`
 * (a string for `/bin/sh -c`, when pipes and globs are wanted). Exactly-one is a `oneOf` in the
 * JSON Schema: a body with both or neither fails validation.
 */
export const ShellRunRequest = named(
  'GuestShellRunRequest',
  z.xor([
    z.strictObject({ ...runFields, argv: Argv }),
    z.strictObject({ ...runFields, command: text().min(1).max(65_536) }),
  ]),
);
export type ShellRunRequest = z.infer<typeof ShellRunRequest>;

/**
 * ShellExit is how a run ended: `exit_code` when it exited, `signal` when a signal killed it
 * (one of the two is null). `timed_out` and `killed` say whether the driver sent that signal.
 */
export const ShellExit = named(
  'GuestShellExit',
  z.strictObject({
    run_id: ShellRunId,
    pid: Pid,
    exit_code: z.int().nullable(),
    signal: z.string().max(16).nullable(),
    timed_out: z.boolean(),
    /** Ended by a kill request. */
    killed: z.boolean(),
    duration_ms: DurationMs,
  }),
);
export type ShellExit = z.infer<typeof ShellExit>;

/** ShellRunResult is a collected run: its exit and both streams, each capped. */
export const ShellRunResult = named(
  'GuestShellRunResult',
  ShellExit.extend({
    output_encoding: OutputEncoding,
    stdout: z.string(),
    stderr: z.string(),
    /** Output beyond SHELL_OUTPUT_MAX_BYTES was discarded (the process still ran to its end). */
    stdout_truncated: z.boolean(),
    stderr_truncated: z.boolean(),
  }),
);
export type ShellRunResult = z.infer<typeof ShellRunResult>;

/** ShellKillRequest signals a run's whole process group. */
export const ShellKillRequest = named(
  'GuestShellKillRequest',
  z.strictObject({ run_id: ShellRunId, signal: ShellSignal.default('SIGTERM') }),
);
export type ShellKillRequest = z.infer<typeof ShellKillRequest>;

/** ShellKillResponse: `signaled` is false when the run had already ended. */
export const ShellKillResponse = named(
  'GuestShellKillResponse',
  z.strictObject({ run_id: ShellRunId, signaled: z.boolean() }),
);
export type ShellKillResponse = z.infer<typeof ShellKillResponse>;

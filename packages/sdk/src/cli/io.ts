/** Io is where a command writes; tests and the bin pass the process's streams. */
export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/**
 * progress reports a long wait on stderr (never stdout, which scripts parse): the elapsed
 * seconds, redrawn in place on a terminal, a line every 5 s otherwise. Call the result to stop.
 */
export function progress(io: Io, what: string): () => void {
  const started = Date.now();
  const isTty = io.stderr.isTTY === true;
  const draw = () => {
    const s = Math.round((Date.now() - started) / 1000);
    io.stderr.write(isTty ? `\r${what}… ${s}s` : `${what}… ${s}s\n`);
  };
  draw();
  const timer = setInterval(draw, isTty ? 1000 : 5000);
  return () => {
    clearInterval(timer);
    if (isTty) io.stderr.write('\n');
  };
}

/** readLine reads one line of stdin (a key typed or piped in). */
export async function readLine(io: Io): Promise<string> {
  let buffer = '';
  for await (const chunk of io.stdin) {
    buffer += chunk.toString();
    const end = buffer.indexOf('\n');
    if (end >= 0) return buffer.slice(0, end).trim();
  }
  return buffer.trim();
}

/** StdoutState: whether stdout failed, and whether that was its reader leaving (EPIPE). */
export interface StdoutState {
  signal: AbortSignal;
  /** The reader closed the pipe: the command ends quietly with exit code 0. */
  isGone(): boolean;
  /** stdout failed another way (a full disk): the command fails. */
  failure(): Error | null;
}

/**
 * watchStdout aborts the command when stdout fails. `cubicle runs logs -f --json | head` closes
 * the pipe after ten lines: the EPIPE that follows is the reader's choice, not an error, so the
 * command stops following and exits 0 instead of dying on an unhandled 'error' event. Errors of
 * stderr are dropped (there is nowhere left to report them).
 */
export function watchStdout(io: Io): StdoutState {
  const controller = new AbortController();
  let error: NodeJS.ErrnoException | null = null;
  io.stdout.on('error', (e: NodeJS.ErrnoException) => {
    error ??= e;
    controller.abort(e);
  });
  io.stderr.on('error', () => {});
  const isGone = () => error?.code === 'EPIPE' || error?.code === 'ERR_STREAM_DESTROYED';
  return {
    signal: controller.signal,
    isGone,
    failure: () => (error && !isGone() ? error : null),
  };
}

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

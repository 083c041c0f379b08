// Progress output for scripts/cubicle.mjs: one line when a step starts, one when it ends, with
// its duration. Plain text when stdout is not a terminal (CI logs) or NO_COLOR is set.

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code) => (text) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : text);
export const bold = paint('1');
export const dim = paint('2');
export const red = paint('31');
export const green = paint('32');
export const yellow = paint('33');
export const cyan = paint('36');

/** Durations of the steps run so far, for the closing summary. */
export const timings = [];

/** formatMs renders a duration as "850 ms" or "12.3 s". */
export function formatMs(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** say prints one line prefixed with the script's name so it stands out from child output. */
export function say(line = '') {
  console.log(line === '' ? '' : `${cyan('cubicle')} ${line}`);
}

/**
 * step runs `fn` between a start line and an end line naming the step and its elapsed time;
 * a failure prints the step's name and rethrows.
 */
export async function step(name, fn) {
  const started = performance.now();
  say(bold(`▶ ${name}`));
  try {
    const result = await fn();
    const elapsed = performance.now() - started;
    timings.push({ name, ms: elapsed });
    say(`${green('✓')} ${name} ${dim(`(${formatMs(elapsed)})`)}`);
    return result;
  } catch (error) {
    say(`${red('✗')} ${name} failed after ${formatMs(performance.now() - started)}`);
    throw error;
  }
}

/** UserError is a failure whose message is the whole story: printed without a stack. */
export class UserError extends Error {}

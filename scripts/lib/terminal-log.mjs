// How an app's log line looks in the terminal that shows `npm start`'s banner: pino's JSON made
// readable on one line (time, level, message, then the fields). The log files keep the JSON,
// which is what tools read.
import { createRequire } from 'node:module';

let format = (line) => line;

/**
 * loadTerminalFormat loads pino-pretty (a root devDependency) once `npm ci` has run; before
 * that, or if it cannot be loaded, lines are shown as they come.
 */
export async function loadTerminalFormat(root, { color = process.stdout.isTTY === true } = {}) {
  try {
    const require = createRequire(`${root}/package.json`);
    const { prettyFactory } = require('pino-pretty');
    const pretty = prettyFactory({
      colorize: color,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      // Same for every line of one process: the prefix already names the app.
      ignore: 'pid,hostname',
    });
    format = (line) => (line.startsWith('{') ? pretty(line).trimEnd() : line);
  } catch {
    format = (line) => line;
  }
}

/** terminalLine is `line` as the terminal shows it (see loadTerminalFormat). */
export function terminalLine(line) {
  try {
    return format(line);
  } catch {
    return line;
  }
}

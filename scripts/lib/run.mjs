// Running child commands with their output streamed to ours.
import { spawn } from 'node:child_process';
import { UserError } from './ui.mjs';

/**
 * run executes `command` with inherited stdio and resolves when it exits 0; any other exit is a
 * UserError naming the command. A missing executable is reported as such.
 */
export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    child.once('error', (error) =>
      reject(new UserError(`could not run ${command}: ${error.message}`, { cause: error })),
    );
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        reject(new UserError(`\`${[command, ...args].join(' ')}\` ${how}`));
      }
    });
  });
}

/** capture executes `command` quietly and returns its exit code and stdout (never throws). */
export function capture(command, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'], ...options });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.once('error', () => resolve({ code: -1, stdout }));
    child.once('close', (code) => resolve({ code: code ?? -1, stdout }));
  });
}

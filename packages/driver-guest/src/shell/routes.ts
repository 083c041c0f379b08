import { GuestRoutes, SHELL_OUTPUT_MAX_BYTES, type ShellRunResult } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { collectOutput } from './collect-output.js';
import { RunRegistry } from './run-registry.js';
import { startRun } from './start-run.js';
import { streamShell } from './stream-shell.js';

/** registerShellRoutes mounts shell.run (collected), shell.kill and the shell.stream WebSocket. */
export function registerShellRoutes(app: FastifyInstance, deps: GuestDeps) {
  const runs = new RunRegistry();
  // A daemon that stops takes its runs with it: nothing it started outlives it.
  app.addHook('onClose', async () => runs.killAll());

  guestRoute(app, GuestRoutes['shell.run'], async (body): Promise<ShellRunResult> => {
    if (body.run_id) runs.reserve(body.run_id);
    let handle;
    try {
      handle = await startRun(body, { baseEnv: deps.childEnv });
    } finally {
      if (body.run_id) runs.release(body.run_id);
    }
    runs.add(handle);
    const out = collectOutput(handle.stdout, SHELL_OUTPUT_MAX_BYTES);
    const err = collectOutput(handle.stderr, SHELL_OUTPUT_MAX_BYTES);
    const exit = await handle.done;
    const stdout = out.result(body.output_encoding);
    const stderr = err.result(body.output_encoding);
    return {
      ...exit,
      output_encoding: body.output_encoding,
      stdout: stdout.text,
      stderr: stderr.text,
      stdout_truncated: stdout.truncated,
      stderr_truncated: stderr.truncated,
    };
  });

  guestRoute(app, GuestRoutes['shell.kill'], (body) => {
    const run = runs.get(body.run_id);
    if (!run) throw new AppError('not_found', `no running command with run_id ${body.run_id}`);
    return { run_id: body.run_id, signaled: run.kill(body.signal) };
  });

  app.get(GuestRoutes['shell.stream'].path, { websocket: true }, (socket, request) =>
    streamShell(socket, request.id, runs, deps),
  );
}

import { RunSupervisor, type Resources } from '@cubicle/control-plane';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * startRunSupervision starts this worker's side of runs (see RunSupervisor): the resources'
 * `redis` publishes events and reads run input; `subscriber` is a connection of its own for
 * control nudges and claim ends. The `run.execute` handler calls `execute`.
 */
export async function startRunSupervision(
  resources: Resources,
  options: { subscriber: Redis; log: Logger },
): Promise<RunSupervisor> {
  const supervisor = new RunSupervisor({
    deps: resources,
    subscriber: options.subscriber,
    log: options.log,
  });
  await supervisor.start();
  return supervisor;
}

import { RunSupervisor, type WorkerDeps } from '@cubicle/control-plane';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * startRunSupervision starts this worker's side of runs (see RunSupervisor): `connection`
 * publishes events and reads run input; `subscriber` is a connection of its own for control
 * nudges and claim ends. The `run.execute` handler calls `execute`.
 */
export async function startRunSupervision(
  deps: WorkerDeps,
  options: { connection: Redis; subscriber: Redis; prefix: string; log: Logger },
): Promise<RunSupervisor> {
  const supervisor = new RunSupervisor({
    deps,
    redis: options.connection,
    subscriber: options.subscriber,
    prefix: options.prefix,
    log: options.log,
  });
  await supervisor.start();
  return supervisor;
}

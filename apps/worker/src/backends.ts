import { createLocalBackend, localBackendScope } from '@cubicle/backends';
import type { Backends } from '@cubicle/control-plane';
import type { Logger } from 'pino';
import type { WorkerEnv } from './env.js';

/**
 * createBackends builds the backends this worker drives (CUBICLE_BACKENDS). A backend that is
 * configured but not available here stops the worker at start rather than failing every job.
 */
export async function createBackends(env: WorkerEnv, log: Logger): Promise<Backends> {
  const backends: Backends = {};
  for (const kind of env.CUBICLE_BACKENDS) {
    switch (kind) {
      case 'local':
        backends.local = createLocalBackend({ scope: localBackendScope(env.DATABASE_URL) });
        break;
      case 'kubernetes':
      case 'kubevirt':
        throw new Error(
          `backend ${kind} is not available in this build (see the Kubernetes issue)`,
        );
      default:
        kind satisfies never;
    }
  }
  log.info({ backends: Object.keys(backends) }, 'backends ready');
  return backends;
}

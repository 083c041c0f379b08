// Vitest globalSetup of the integration and e2e projects. Both list this file and Vitest runs it
// once per project, so the services live on globalThis with a count of users: the first project
// starts them, the last one to finish stops them.
import type { TestProject } from 'vitest/node';
import type { HarnessContext } from './context.js';
import { startHarnessServices, type HarnessServices } from './services.js';

interface Shared {
  users: number;
  services: Promise<HarnessServices>;
}

const KEY = Symbol.for('cubicle.test-harness');
const registry = globalThis as typeof globalThis & { [KEY]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (registry[KEY] ??= { users: 0, services: startHarnessServices() });
  shared.users += 1;
  let context: HarnessContext;
  try {
    ({ context } = await shared.services);
  } catch (error) {
    shared.users -= 1;
    if (shared.users === 0) delete registry[KEY];
    throw error;
  }
  project.provide('cubicle', context);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete registry[KEY];
    await (await shared.services).stop();
  };
}

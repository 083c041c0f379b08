import { afterAll, beforeAll, describe } from 'vitest';
import { cliSuite } from './cli-suite.js';
import { startLiveStack, type LiveStack } from './live-stack.js';
import { sdkSuite } from './sdk-suite.js';

// One live Cubicle (real Postgres, Redis, worker and desktops) for the SDK's and the CLI's
// tests: starting it is the expensive part, and both suites need the same things of it.
let live: LiveStack;
beforeAll(async () => {
  live = await startLiveStack();
}, 120_000);
afterAll(async () => live?.stop());

// Child processes (the quick start, the bin) get a minimal environment: PATH only.
const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

describe('@cubicle/sdk against a live Cubicle', { timeout: 180_000 }, () =>
  sdkSuite(() => live, baseEnv),
);
describe('the cubicle CLI against a live Cubicle', { timeout: 180_000 }, () =>
  cliSuite(() => live, baseEnv),
);

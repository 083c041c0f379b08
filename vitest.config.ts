// One Vitest run, three projects with their own timeouts. Integration and e2e suites get real
// PostgreSQL and Redis from test/harness/global-setup.ts (private processes unless DATABASE_URL /
// REDIS_URL are given); unit tests need neither and start nothing.
//
// Wall time on the 2-core machines (measured, loaded by other work, same minutes each):
// - Vitest's default is one worker there (cores - 1). The projects run one after another
//   (sequence.groupOrder) with two workers each: most files wait on processes they started
//   (desktops, Postgres, browsers), not on the CPU. 10 integration files: 221/291 s with one
//   worker, 157/187 s with two, the same CPU seconds.
// - Unit files are pure code and run without isolation: one worker process imports a module once
//   for all files instead of once per file (151 files: 248 s → 37 s).
// - Built workspace packages (packages/*/dist, apps/*/dist) are loaded by Node itself, as in
//   production, instead of through Vite's module runner per test file (import time ≈ -20 %).
//   Tests import sources (../src) through Vite as before.
// CUBICLE_TEST_WORKERS=1 runs every project one file at a time again.
import { defineConfig } from 'vitest/config';

const harness = ['test/harness/global-setup.ts'];
const workers = Number(process.env.CUBICLE_TEST_WORKERS) || 2;

export default defineConfig({
  test: {
    server: { deps: { external: [/\/(packages|apps)\/[^/]+\/dist\//] } },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'],
          isolate: false,
          maxWorkers: workers,
          sequence: { groupOrder: 0 },
          testTimeout: 10_000,
          hookTimeout: 10_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [
            'test/integration/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
          ],
          globalSetup: harness,
          maxWorkers: workers,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          // Each e2e file runs real desktops; two files at a time overlap one's waits with the
          // other's work (a 45 s shell call, a reclaim window) on a 2-core machine.
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: harness,
          maxWorkers: workers,
          sequence: { groupOrder: 2 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});

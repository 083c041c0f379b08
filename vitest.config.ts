// One Vitest run, three projects with their own timeouts. Integration and e2e suites get real
// PostgreSQL and Redis from test/harness/global-setup.ts (private processes unless DATABASE_URL /
// REDIS_URL are given); unit tests need neither and start nothing.
import { defineConfig } from 'vitest/config';

const harness = ['test/harness/global-setup.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'],
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
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          // Each e2e file runs real desktops; one file at a time keeps a 2-core machine responsive.
          fileParallelism: false,
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: harness,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});

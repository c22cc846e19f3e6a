import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // forks: werift and Chromium child processes clean up reliably only in a process of their own.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.{ts,tsx}'], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // One browser, one sandbox at a time on a 2-core machine.
          fileParallelism: false,
        },
      },
    ],
  },
});

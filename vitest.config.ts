import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // forks: werift and Chromium child processes clean up reliably only in a process of their own.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
          testTimeout: 20_000,
          // The embedded records each relay a test starts copies, made once per run (test/support/relay-data-dir.ts).
          globalSetup: ['test/support/relay-data-template.setup.ts'],
        },
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

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    // Two cores: a few files at once, each with its own database and task queue.
    maxWorkers: 3,
    fileParallelism: true,
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    // No retries: a test awaits the event it asserts (a polled condition with a generous bound), never sleeps and retries.
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    // Child processes (workers, the launcher) inherit these: the simulated dialer is asked for explicitly, and
    // pacing set far above any test's calls, as test/support/context.ts sets them.
    env: {
      LOG_LEVEL: 'silent',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      DIALER_SIMULATED_ALLOWED: 'true',
      CAMPAIGN_DEFAULT_CALLS_PER_SECOND: '1000',
      CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER: '1000',
    },
  },
});

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
    // One more try for a test that failed: a few integration tests wait on real servers (a killed worker's
    // replacement, a pool held busy, history limits) and can lose a race on a loaded 2-core machine. A
    // failure that repeats still fails the run; the JSON report keeps each retry.
    retry: 1,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    env: { LOG_LEVEL: 'silent', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});

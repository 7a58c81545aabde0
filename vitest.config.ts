import { defineConfig } from 'vitest/config';

// Embedded ClickHouse (chdb) allows one data directory per process, so every test file
// runs in its own forked process.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});

import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Measurements (a response time compared with another) run alone, after every other file: on a
// loaded CPU they would measure the neighbours.
const TIMING = ['src/**/*-timing.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker keeps its modules from one file to the next (each file still opens its own app on its
    // own database), so the sources are imported once per worker rather than once per file.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: TIMING,
          // The files wait on sockets, mail and child processes much of the time: one worker more than
          // the cores keeps the CPU busy (the default, one less than the cores, leaves one idle here).
          maxWorkers: os.availableParallelism() + 1,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'timing', include: TIMING, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});

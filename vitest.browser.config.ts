// Browser tests of the web app (npm run test:browser) and the console's screenshots
// (npm run screenshots): Chromium, driven by playwright-core, against the real API listening on a
// free port with web/dist built once (web/e2e/global-setup.ts). Not part of `npm test`. One file at
// a time: each starts its own API and browser, and the machine's cores are few.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts', 'web/e2e/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    projects: [
      { extends: true, test: { name: 'browser', include: ['web/e2e/**/*.test.ts'] } },
      { extends: true, test: { name: 'screenshots', include: ['web/e2e/screenshots.shot.ts'] } },
    ],
  },
});

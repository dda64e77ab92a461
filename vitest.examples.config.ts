// The examples of docs/ run against a local instance (npm run test:examples): docs/tokens.md's Node,
// Python and Go token verification. Not part of `npm test`, which needs nothing but Node.js: the
// Python and Go toolchains come from Debian's packages, which .ci/run installs before running these.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    include: ['test/**/*.examples.ts'],
  },
});

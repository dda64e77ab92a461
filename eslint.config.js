import js from '@eslint/js';
import fs from 'node:fs';
import path from 'node:path';
import tseslint from 'typescript-eslint';

// The layers of docs/architecture.md, enforced: a feature never imports another feature (they meet
// through ports handed over by the composition), the kernel below them (platform/, http/, db/, lib/,
// providers/, config/) never imports a feature, a job the processes run beside requests (jobs/)
// imports no feature and only the entry points import it, and nothing in src/ imports the tests' fixtures.
const FEATURES = fs.readdirSync(path.join(import.meta.dirname, 'src/modules')).filter((f) => !f.includes('.'));
const TESTS = { regex: '^(\\.\\./)+test/', message: 'src/ never imports test/: fixtures belong to the tests' };
const JOBS = {
  regex: '^(\\.\\./)+jobs/',
  message: 'A job is started by the entry points (main.ts, worker.ts) only (docs/architecture.md)',
};
const boundaries = [
  ...FEATURES.map((feature) => ({
    files: [`src/modules/${feature}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(modules/)?(${FEATURES.filter((f) => f !== feature).join('|')})/`,
              message:
                'Features never import one another: hand the step over as a port from the composition (docs/architecture.md)',
            },
            JOBS,
            TESTS,
          ],
        },
      ],
    },
  })),
  {
    files: [
      'src/platform/**/*.ts',
      'src/http/**/*.ts',
      'src/db/**/*.ts',
      'src/lib/**/*.ts',
      'src/providers/**/*.ts',
      'src/config/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+modules/', message: 'The kernel never imports a feature (docs/architecture.md)' },
            JOBS,
            TESTS,
          ],
        },
      ],
    },
  },
  {
    files: ['src/jobs/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+modules/',
              message: 'A job never imports a feature: it works on the tables and the kernel (docs/architecture.md)',
            },
            TESTS,
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'data',
      'drizzle',
      'coverage',
      'dist',
      'client/dist',
      'client/src/schema.ts',
      'web/dist',
      'web/.dist-*',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  ...boundaries,
  {
    files: ['bench/**', 'test/**', '**/*.test.ts', 'src/db/migrate-cli.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The client's install script (plain Node.js, run by npm).
    files: ['client/prepare.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);

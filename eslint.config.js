import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'data', 'drizzle', 'coverage', 'dist', 'client/dist', 'client/src/schema.ts', 'web/dist', 'web/.dist-*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['bench/**', 'test/**', '**/*.test.ts', 'src/db/migrate-cli.ts'],
    rules: { 'no-console': 'off' },
  },
);

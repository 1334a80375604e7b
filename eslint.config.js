import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'bench-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // Config is read in exactly one place (STYLE §6).
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through server/config.' }],
    },
  },
  {
    files: ['server/config/**', 'server/main.ts', 'test/**', 'bin/**', '*.config.ts', '*.config.js'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests read loosely-typed JSON bodies; `any` there keeps assertions readable.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['web/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
);

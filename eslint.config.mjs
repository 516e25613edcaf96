// @ts-check
/**
 * Lint rules (`npm run lint`, part of `npm test`): typescript-eslint's type-checked
 * recommendations with the types of tsconfig.json, and one import order. Formatting is
 * Prettier's (`.prettierrc.json`, `npm run format`); eslint-config-prettier turns off every
 * rule that would argue with it.
 */
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'coverage/',
      'data/',
      'test-artifacts/',
      'test/client/generated/',
      'test/client/galaxy/generated/',
      'test/generated/',
      'bench/',
      'scripts/',
      '*.js',
      '*.cjs',
      '*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // `async` without `await` is how a Fastify hook says it returns a promise (rather than
      // taking a callback), and how an in-memory store implements an asynchronous interface.
      '@typescript-eslint/require-await': 'off',
      // Static factories (`RegionDto.from`, `RegionEventDto.from`) are passed as functions.
      '@typescript-eslint/unbound-method': ['error', { ignoreStatic: true }],
    },
  },
  {
    // Tests read response bodies and headers, which are untyped JSON and strings-or-lists by
    // nature, and hand jest's mocked methods to expect(); the rules about `any`, stringifying
    // and unbound methods would flag every one.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  prettier,
);

// What the scaffold runs ESLint for: putting the imports of what it wrote in the project's
// order (simple-import-sort, as eslint.config.mjs has it). Without the type-checked rules,
// which need the whole program and take most of a full lint's time; `npm run lint` and the
// scaffold's test lint the result with every rule.
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

export default [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
    },
  },
];

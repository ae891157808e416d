import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'bench/**/*.mjs',
      'bin/**',
      // Typed by types generated while test/http/typed-client.test.ts runs; that test type-checks it.
      'test/http/typed-client/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', '.dependency-cruiser.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only', message: 'No focused tests.' },
        { object: 'it', property: 'skip', message: 'No skipped tests.' },
        { object: 'describe', property: 'only', message: 'No focused tests.' },
        { object: 'describe', property: 'skip', message: 'No skipped tests.' },
        { object: 'test', property: 'only', message: 'No focused tests.' },
        { object: 'test', property: 'skip', message: 'No skipped tests.' },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The escape boundary: markup that skips escaping is made inside the console's shell only. A page
    // is written with `html` and the partials (src/console/widgets.ts).
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    ignores: ['src/console/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/console/html.js', '**/console/html'],
              importNames: ['trusted'],
              message: 'trusted() is for src/console/ only: write markup with html`` and the partials of src/console/widgets.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // Every integer of a schema is one both databases can hold (src/core/bounds.ts): Integer() from http/schemas.ts.
    files: ['src/**/*.ts'],
    ignores: ['src/http/schemas.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='Type'][property.name='Integer']",
          message: 'Use Integer() from src/http/schemas.ts: it bounds the value to what both databases hold.',
        },
      ],
    },
  },
  {
    // A file that outgrows one screenful of ideas is split by what it does (docs/architecture.md).
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  { files: ['eslint.config.js', '.dependency-cruiser.js'], ...tseslint.configs.disableTypeChecked },
);

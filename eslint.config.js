// One lint config for the whole workspace; packages run `eslint src` against it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/.next/**',
      '**/node_modules/**',
      '**/src/generated/**',
      '**/.turbo/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: "Read configuration through this process's env.ts only.",
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          // A file URL's pathname is percent-encoded: a clone under a path with spaces
          // (`/tmp/ci%20dir/`) breaks whatever is handed that string (Next's build did).
          selector:
            "MemberExpression[property.name='pathname'][object.type='NewExpression'][object.callee.name='URL'][object.arguments.1.object.type='MetaProperty']",
          message: 'Use fileURLToPath(new URL(…, import.meta.url)): a pathname is percent-encoded.',
        },
      ],
    },
  },
  {
    // Plain Node scripts (bootstrap, reaper, generators) run before or outside the TypeScript build.
    files: ['**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: globals.node },
  },
  {
    // env.ts files are the one place allowed to read process.env; scripts and test harnesses set up processes.
    files: [
      '**/env.ts',
      '**/*.test.ts',
      'test/**',
      '**/*.mjs',
      '**/vitest.config.ts',
      '**/prisma.config.ts',
      'apps/web/lib/env.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
);

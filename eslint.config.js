// Type-aware lint: floating promises and unsafe any are the bugs that lose events in a handler.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      // Plain CommonJS loaded into the rehearsed functions (no project code, no TypeScript project).
      'local/rehearse/*.cjs',
      'cdk.out/',
      'coverage/',
      'bench/.build/',
      '.local-data/',
      'cli/bridge.mjs',
      '.stryker-tmp/',
      'reports/',
      '.local/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Import boundaries of the hexagon: the domain (shared/ outside adapters) sees only ports; adapters
  // and functions never reach into the local stack or the CLI.
  {
    files: ['shared/**/*.ts'],
    ignores: ['shared/adapters/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/adapters', '**/adapters/**'], message: 'domain code depends on ports (shared/ports.ts), not adapters' },
            {
              group: ['**/local/**', '**/cli/**', '**/infra/**', '**/functions/**'],
              message: 'domain code must not import local/, cli/, infra/ or functions/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['shared/adapters/**/*.ts', 'functions/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/local/**', '**/cli/**'], message: 'adapters and functions must not import local/ or cli/' }] },
      ],
    },
  },
  // MACs are compared in constant time only.
  {
    files: ['**/*signature*.ts'],
    ignores: ['test/**', 'bench/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name='equals']", message: 'compare MACs with crypto.timingSafeEqual' },
        {
          selector: "CallExpression[callee.object.name='Buffer'][callee.property.name='compare']",
          message: 'compare MACs with crypto.timingSafeEqual',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);

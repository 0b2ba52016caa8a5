// Type-aware lint: floating promises and unsafe any are the bugs that lose events in a handler.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import js from '@eslint/js';
import ts from 'typescript';
import tseslint from 'typescript-eslint';

// --- Import cycles, type-only imports included --------------------------------------------------
// import-x/no-cycle skips `import type`, and a cycle of types is still a tangle (ports that import
// the modules implementing them): this rule follows every relative import, types included.

const importsCache = new Map();

function resolveImport(from, specifier) {
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.m?js$/, '.ts'), `${base}.ts`, `${base}.mts`, `${base}/index.ts`];
  return candidates.find((file) => existsSync(file) && statSync(file).isFile() && /\.m?ts$/.test(file));
}

/** The project files `file` imports (static, dynamic and type-only; re-exports too). */
function importsOf(file) {
  let imports = importsCache.get(file);
  if (imports === undefined) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    imports = importedFiles.flatMap(({ fileName }) => (fileName.startsWith('.') ? [resolveImport(file, fileName) ?? []].flat() : []));
    importsCache.set(file, imports);
  }
  return imports;
}

/** The shortest import path from `file` back to itself, or undefined. */
function cycleFrom(file) {
  const cameFrom = new Map();
  const queue = [file];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const imported of importsOf(next)) {
      if (imported === file) {
        const path = [file];
        for (let at = next; at !== file; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, file];
      }
      if (!cameFrom.has(imported)) {
        cameFrom.set(imported, next);
        queue.push(imported);
      }
    }
  }
  return undefined;
}

const noImportCycle = {
  meta: { type: 'problem', schema: [], messages: { cycle: 'import cycle (type-only imports count): {{path}}' } },
  create(context) {
    return {
      Program(node) {
        const cycle = cycleFrom(context.filename);
        if (cycle) context.report({ node, messageId: 'cycle', data: { path: cycle.map((f) => relative(context.cwd, f)).join(' → ') } });
      },
    };
  },
};

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
  // No import cycles anywhere: ports are leaves, and every module's dependencies form a tree. One rule,
  // the local one: import-x/no-cycle skipped `import type` and took half of lint's time (31 s of 63 s).
  {
    files: ['**/*.ts', '**/*.mts'],
    plugins: { bridge: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'bridge/no-import-cycle': 'error' },
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
  // The CLI uses the local stack (ready file, local Slack app); the local stack never uses the CLI (the
  // rehearsal is handed its CLI runner by cli/rehearse.ts).
  {
    files: ['local/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/cli', '**/cli/**'], message: 'local/ must not import cli/ (cli/ depends on local/)' }] },
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

/**
 * The lint rule that keeps the import graph acyclic (eslint.config.js, `bridge/no-import-cycle`): it
 * follows every relative import, `import type` and dynamic `import()` included, and names the cycle.
 * It is the only cycle rule, so a cycle it missed would reach main.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Linter, type Rule } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type FlatConfig = { plugins?: Record<string, { rules?: Record<string, Rule.RuleModule> }> };

async function importCycleRule(): Promise<Rule.RuleModule> {
  const configUrl = pathToFileURL(join(import.meta.dirname, '../../eslint.config.js')).href;
  const { default: configs } = (await import(configUrl)) as { default: FlatConfig[] };
  const rule = configs.flatMap((config) => config.plugins?.bridge?.rules?.['no-import-cycle'] ?? [])[0];
  if (!rule) throw new Error('eslint.config.js no longer defines bridge/no-import-cycle');
  return rule;
}

describe('lint: no import cycle', () => {
  let dir: string;
  let rule: Rule.RuleModule;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'import-cycle-'));
    rule = await importCycleRule();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes the files, then lints `entry` with the rule alone; the messages it reports. */
  function lint(files: Record<string, string>, entry: string): string[] {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const linter = new Linter({ configType: 'flat', cwd: dir });
    const config: Linter.Config[] = [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { bridge: { rules: { 'no-import-cycle': rule } } },
        rules: { 'bridge/no-import-cycle': 'error' },
      },
    ];
    return linter.verify(files[entry] ?? '', config, { filename: join(dir, entry) }).map((message) => message.message);
  }

  it('reports a cycle of value imports and names its path', () => {
    const messages = lint(
      {
        'a.ts': "import { b } from './b';\nexport const a = b;\n",
        'b.ts': "import { c } from './c.js';\nexport const b = c;\n",
        'c.ts': "import { a } from './a';\nexport const c = a;\n",
      },
      'a.ts',
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/import cycle.*a\.ts → .*b\.ts → .*c\.ts → .*a\.ts/);
  });

  it('reports a cycle closed only by `import type` or a dynamic import', () => {
    const typeOnly = {
      'p.ts': "import type { Q } from './q';\nexport type P = Q;\n",
      'q.ts': "import { p } from './r';\nexport type Q = number;\nexport const q = p;\n",
      'r.ts': "import type { P } from './p';\nexport const p: P | undefined = undefined;\n",
    };
    expect(lint(typeOnly, 'p.ts')).toEqual([expect.stringMatching(/^import cycle.*p\.ts → .*q\.ts → .*r\.ts → .*p\.ts$/)]);
    const dynamic = {
      'd.ts': "export const load = () => import('./e');\n",
      'e.ts': "import { load } from './d';\nexport const again = load;\n",
    };
    expect(lint(dynamic, 'd.ts')).toEqual([expect.stringMatching(/^import cycle.*d\.ts → .*e\.ts → .*d\.ts$/)]);
  });

  it('passes an import tree (a shared leaf imported twice is no cycle)', () => {
    const tree = {
      'root.ts': "import { x } from './left';\nimport { y } from './right';\nexport const z = x + y;\n",
      'left.ts': "import { leaf } from './leaf';\nexport const x = leaf;\n",
      'right.ts': "import { leaf } from './leaf';\nexport const y = leaf;\n",
      'leaf.ts': 'export const leaf = 1;\n',
    };
    expect(lint(tree, 'root.ts')).toEqual([]);
  });
});

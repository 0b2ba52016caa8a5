import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { CHART_ASSETS, CHART_ASSETS_DIR, ChartAssetMissing, chartAssetPath } from '../../shared/charts/assets';
import { loadChartRenderer } from '../../shared/charts/load';
import { NeedsOperatorFix } from '../../shared/errors';

const ROOT = join(import.meta.dirname, '..', '..');

/** The module specifiers `file` imports at load time (type-only imports and dynamic import() excluded). */
function staticRuntimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const imports: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly !== true) {
      const named = statement.importClause?.namedBindings;
      const allTypes =
        named !== undefined &&
        ts.isNamedImports(named) &&
        statement.importClause?.name === undefined &&
        named.elements.every((e) => e.isTypeOnly);
      if (!allTypes) imports.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
    if (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier !== undefined) {
      imports.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return imports;
}

describe('loadChartRenderer', () => {
  it('is the only way in, and loads nothing until called: load.ts and types.ts import types only', () => {
    for (const file of ['shared/charts/load.ts', 'shared/charts/types.ts']) expect(staticRuntimeImports(join(ROOT, file))).toEqual([]);
  });

  it('imports the renderer once', async () => {
    const [a, b] = await Promise.all([loadChartRenderer(), loadChartRenderer()]);
    expect(a).toBe(b);
    expect(typeof a.renderTrendChart).toBe('function');
  });
});

describe('chart assets', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'chart-assets-'));
    dirs.push(dir);
    return dir;
  }

  it('are looked up beside the Lambda handler first', () => {
    const taskRoot = tempDir();
    mkdirSync(join(taskRoot, CHART_ASSETS_DIR));
    writeFileSync(join(taskRoot, CHART_ASSETS_DIR, CHART_ASSETS.font.file), 'font');
    expect(chartAssetPath('font', { LAMBDA_TASK_ROOT: taskRoot }, ROOT)).toBe(join(taskRoot, CHART_ASSETS_DIR, 'DejaVuSans.ttf'));
    // Not copied there: node_modules of the working directory.
    expect(chartAssetPath('wasm', { LAMBDA_TASK_ROOT: taskRoot }, ROOT)).toBe(
      join(ROOT, 'node_modules', '@resvg', 'resvg-wasm', 'index_bg.wasm'),
    );
  });

  it('missing everywhere is an operator fix naming the file and the places looked in', () => {
    const taskRoot = tempDir();
    const error = (() => {
      try {
        chartAssetPath('font', { LAMBDA_TASK_ROOT: taskRoot }, tempDir());
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ChartAssetMissing);
    expect(error).toBeInstanceOf(NeedsOperatorFix);
    expect((error as ChartAssetMissing).message).toContain(join(taskRoot, CHART_ASSETS_DIR, 'DejaVuSans.ttf'));
    expect((error as ChartAssetMissing).fix).toContain('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
  });
});

/**
 * The stack's esbuild options bundle the digest function (which draws charts): the options the
 * benchmarks build with are the ones the stack deploys, so a bundle that fails here fails in both.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { functionEsbuildOptions } from '../../infra/bridge-function';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function bundleDigest(charts: boolean) {
  return build({
    entryPoints: [`${ROOT}functions/digest/handler.ts`],
    ...functionEsbuildOptions(charts),
    bundle: true,
    platform: 'node',
    write: false,
    outdir: `${ROOT}cdk.out/function-bundling-test`,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
}

describe('function bundling', () => {
  it('bundles the digest handler as CommonJS with the chart options', { timeout: 120_000 }, async () => {
    const result = await bundleDigest(true);
    expect(result.errors).toEqual([]);
    expect(result.outputFiles.some((file) => file.path.endsWith('handler.js'))).toBe(true);
  });

  it('cannot bundle it without the vega-canvas alias (why a chart function needs it)', { timeout: 120_000 }, async () => {
    await expect(bundleDigest(false)).rejects.toThrow(/top-level await/i);
  });
});

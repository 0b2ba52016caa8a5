/**
 * The stack's esbuild options bundle the digest function (which may draw PNG charts): the options the
 * benchmarks build with are the ones the stack deploys, so a bundle that fails here fails in both. The
 * PNG renderer is a bundle of its own beside the handler: the usual bundle stays small, and the
 * handler's import of the renderer finds it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { chartRendererEsbuildOptions, CHART_RENDERER_BUNDLE, functionEsbuildOptions } from '../../infra/bridge-function';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The digest's usual bundle: what a digest whose chart Slack draws loads (issue 30). */
const USUAL_BUNDLE_MAX_BYTES = 850 * 1024;
const OUT = mkdtempSync(join(tmpdir(), 'function-bundling-'));

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

function bundle(
  entry: { file: string } | { contents: string },
  charts: boolean,
  outdir = `${ROOT}cdk.out/function-bundling-test`,
  write = false,
) {
  return build({
    ...('file' in entry ? { entryPoints: [entry.file] } : { stdin: { contents: entry.contents, resolveDir: ROOT, loader: 'ts' as const } }),
    ...functionEsbuildOptions(charts),
    bundle: true,
    platform: 'node',
    write,
    outdir,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
}

describe('function bundling', () => {
  it('bundles the digest handler as CommonJS, within 850 KiB, without the PNG renderer', { timeout: 120_000 }, async () => {
    const result = await bundle({ file: `${ROOT}functions/digest/handler.ts` }, true);
    expect(result.errors).toEqual([]);
    const handler = (result.outputFiles ?? []).find((file) => file.path.endsWith('handler.js'));
    expect(handler).toBeDefined();
    expect(handler!.contents.length).toBeLessThanOrEqual(USUAL_BUNDLE_MAX_BYTES);
    expect(handler!.text).toContain(`"${CHART_RENDERER_BUNDLE.file}"`);
    expect(handler!.text).not.toContain('vega-lite');
  });

  it('bundles the AWS SDK clients from their ES module builds, not their CommonJS ones', { timeout: 120_000 }, async () => {
    const result = await bundle({ file: `${ROOT}functions/digest/handler.ts` }, true);
    const clients = Object.keys(result.metafile.inputs).filter((path) => path.includes('node_modules/@aws-sdk/client-'));
    expect(clients.filter((path) => path.includes('/dist-es/'))).not.toEqual([]);
    expect(clients.filter((path) => path.includes('/dist-cjs/'))).toEqual([]);
  });

  it('emits the renderer beside the handler, and the handler imports it from there', { timeout: 180_000 }, async () => {
    await bundle({ contents: "export { loadChartRenderer } from './shared/charts/load';" }, true, OUT, true);
    const renderer = await build({ ...chartRendererEsbuildOptions(OUT), logLevel: 'silent', absWorkingDir: ROOT });
    expect(renderer.errors).toEqual([]);
    writeFileSync(join(OUT, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    const child = spawnSync(
      process.execPath,
      ['-e', `require(${JSON.stringify(join(OUT, 'stdin.js'))}).loadChartRenderer().then((r) => console.log(typeof r.renderTrendChart))`],
      { encoding: 'utf8', cwd: OUT },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('function');
  });

  it(
    'bundles no credential chain but the environment, and an AWS client gets its credentials from there',
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(OUT, 'credentials-'));
      const result = await build({
        stdin: {
          contents:
            "import { SQSClient } from '@aws-sdk/client-sqs'; export const credentials = () => new SQSClient({ region: 'eu-west-1' }).config.credentials();",
          resolveDir: ROOT,
          loader: 'ts',
        },
        ...functionEsbuildOptions(false),
        bundle: true,
        platform: 'node',
        outdir: dir,
        metafile: true,
        logLevel: 'silent',
        absWorkingDir: ROOT,
      });
      const inputs = Object.keys(result.metafile.inputs);
      expect(inputs.filter((path) => /credential-provider-(node|ini|sso|process|web-identity)|nested-clients/.test(path))).toEqual([]);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
      const run = (env: Record<string, string>) =>
        spawnSync(
          process.execPath,
          [
            '-e',
            `require(${JSON.stringify(join(dir, 'stdin.js'))}).credentials().then((c) => console.log(JSON.stringify(c)), (e) => console.log(e.message))`,
          ],
          { encoding: 'utf8', cwd: dir, env: { PATH: process.env['PATH'] ?? '', ...env } },
        ).stdout.trim();
      expect(
        JSON.parse(run({ AWS_ACCESS_KEY_ID: 'AKIDLAMBDA', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' })),
      ).toMatchObject({
        accessKeyId: 'AKIDLAMBDA',
        secretAccessKey: 'secret',
        sessionToken: 'token',
      });
      expect(run({})).toContain('no AWS credentials in the environment (AWS_ACCESS_KEY_ID');
    },
  );

  it('cannot bundle the renderer without the vega-canvas alias (why a chart function needs it)', { timeout: 120_000 }, async () => {
    const { alias: _alias, ...withoutAlias } = chartRendererEsbuildOptions(OUT);
    await expect(build({ ...withoutAlias, write: false, logLevel: 'silent', absWorkingDir: ROOT })).rejects.toThrow(/top-level await/i);
  });
});

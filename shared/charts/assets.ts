/**
 * The chart renderer's two binary assets, read from files (never bundled into the JavaScript): the
 * resvg WebAssembly module and the DejaVu Sans font (resvg-wasm sees no system fonts and draws no text
 * without one). Each is looked up in order:
 *
 * 1. `$LAMBDA_TASK_ROOT/chart-assets/<file>`: the Lambda bundle ships them next to the handler
 *    (infra copies `CHART_ASSETS[*].packagePath` from node_modules into `chart-assets/`).
 * 2. The package in node_modules, resolved from the working directory (local stack, tests, bench).
 *
 * Read once per process, and the wasm initialised once (resvg's initWasm refuses a second call).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { NeedsOperatorFix } from '../errors';

/** Folder beside the Lambda handler that holds the assets. */
export const CHART_ASSETS_DIR = 'chart-assets';

/** Each asset: its file name in `chart-assets/` and where it comes from in node_modules. */
export const CHART_ASSETS = {
  wasm: { file: 'index_bg.wasm', packagePath: '@resvg/resvg-wasm/index_bg.wasm' },
  font: { file: 'DejaVuSans.ttf', packagePath: 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf' },
} as const;

export type ChartAssetName = keyof typeof CHART_ASSETS;

/** An asset is in none of the places it is looked up: the deployment is missing it. */
export class ChartAssetMissing extends NeedsOperatorFix {
  override name = 'ChartAssetMissing';
  constructor(asset: ChartAssetName, tried: readonly string[]) {
    super(
      `chart asset ${CHART_ASSETS[asset].file} not found (looked in ${tried.join(', ') || 'no place'})`,
      `ship ${CHART_ASSETS[asset].packagePath} as ${CHART_ASSETS_DIR}/${CHART_ASSETS[asset].file} beside the handler (infra bundling), or install the package locally`,
    );
  }
}

/** The places `asset` is looked for, in order. */
export function chartAssetCandidates(asset: ChartAssetName, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const { file, packagePath } = CHART_ASSETS[asset];
  const candidates: string[] = [];
  const taskRoot = env['LAMBDA_TASK_ROOT'];
  if (taskRoot !== undefined && taskRoot !== '') candidates.push(join(taskRoot, CHART_ASSETS_DIR, file));
  try {
    candidates.push(createRequire(join(cwd, 'package.json')).resolve(packagePath));
  } catch {
    // Not installed here: only the Lambda folder is left.
  }
  return candidates;
}

/** The first existing path of `asset`; ChartAssetMissing when there is none. */
export function chartAssetPath(asset: ChartAssetName, env?: NodeJS.ProcessEnv, cwd?: string): string {
  const candidates = chartAssetCandidates(asset, env, cwd);
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new ChartAssetMissing(asset, candidates);
  return found;
}

const loaded = new Map<ChartAssetName, Uint8Array>();

/** The asset's bytes, read on first use and kept. */
export function chartAsset(asset: ChartAssetName): Uint8Array {
  let bytes = loaded.get(asset);
  if (bytes === undefined) {
    bytes = new Uint8Array(readFileSync(chartAssetPath(asset)));
    loaded.set(asset, bytes);
  }
  return bytes;
}

let wasmReady: Promise<void> | undefined;

/**
 * Initialises the resvg wasm once per process with `init` (resvg's `initWasm`). A failed attempt is
 * forgotten, so the next chart tries again.
 */
export function initWasmOnce(init: (module: Uint8Array) => Promise<void>): Promise<void> {
  wasmReady ??= Promise.resolve()
    .then(() => init(chartAsset('wasm')))
    .catch((error: unknown) => {
      wasmReady = undefined;
      throw error;
    });
  return wasmReady;
}

/**
 * The one way in to the chart renderer: `await loadChartRenderer()` imports it (vega, vega-lite, resvg)
 * on first use. Only types are imported statically, so code that runs with charts off may import this
 * module and pay nothing (test/unit/chart-load.test.ts checks that).
 */
import type * as TrendChart from './trend-chart';
import type { ChartRenderer } from './types';

export type { ChartRenderer } from './types';

let loading: Promise<ChartRenderer> | undefined;

/**
 * The renderer's module, named at run time so no bundler follows it: deployed, `trend-chart.js` is the
 * renderer's own bundle beside the handler (infra/bridge-function.ts, CHART_RENDERER_BUNDLE), read only
 * when a PNG is drawn; from source, the TypeScript module beside this one.
 */
function rendererModule(): string {
  return ['.', 'trend-chart.js'].join('/');
}

/** The renderer, imported once per process; a failed import is retried on the next call. */
export function loadChartRenderer(): Promise<ChartRenderer> {
  loading ??= (import(/* @vite-ignore */ rendererModule()) as Promise<typeof TrendChart>)
    .then((module) => module.createChartRenderer())
    .catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
  return loading;
}

/**
 * The one way in to the chart renderer: `await loadChartRenderer()` imports it (vega, vega-lite, resvg)
 * on first use. Only types are imported statically, so code that runs with charts off may import this
 * module and pay nothing (test/unit/chart-load.test.ts checks that).
 */
import type { ChartRenderer } from './types';

export type { ChartRenderer } from './types';

let loading: Promise<ChartRenderer> | undefined;

/** The renderer, imported once per process; a failed import is retried on the next call. */
export function loadChartRenderer(): Promise<ChartRenderer> {
  loading ??= import('./trend-chart')
    .then((module) => module.createChartRenderer())
    .catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
  return loading;
}

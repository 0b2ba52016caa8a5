/**
 * The data visualization block (`@slack/types` 3.2.0 has the data table but not the chart yet).
 * Shapes from docs.slack.dev's block reference; limits in ./limits.
 */

export interface ChartPoint {
  label: string;
  value: number;
}

export interface ChartSeriesData {
  name: string;
  data: ChartPoint[];
}

export interface AxisConfig {
  categories: string[];
  x_label?: string;
  y_label?: string;
}

export type DataVisualizationChart =
  { type: 'line' | 'bar' | 'area'; series: ChartSeriesData[]; axis_config: AxisConfig } | { type: 'pie'; segments: ChartPoint[] };

export interface DataVisualizationBlock {
  type: 'data_visualization';
  title: string;
  chart: DataVisualizationChart;
  block_id?: string;
}

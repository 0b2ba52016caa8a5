/** The chart the chart benchmark draws: eight engines over nine weekly runs, the brand against three rivals (the largest usual chart). */
import type { EnginePoint, RivalPoint, TrendChartInput } from '../shared/charts/types';

const WEEK_MS = 7 * 24 * 3600 * 1000;
const T0 = Date.UTC(2025, 0, 6);

export function chartInput(): TrendChartInput {
  const engines: EnginePoint[] = [];
  const points: RivalPoint[] = [];
  ['ChatGPT', 'Gemini', 'Perplexity', 'Claude', 'Copilot', 'AI Overviews', 'Grok', 'Meta AI'].forEach((engine, k) => {
    for (let i = 0; i < 9; i++) engines.push({ engine, atMs: T0 + i * WEEK_MS, value: 30 + 5 * k + 10 * Math.sin(i / 2 + k) });
  });
  ['Northwind', 'Summit Gear', 'Rival Co', 'TrailCo'].forEach((name, k) => {
    for (let i = 0; i < 9; i++) points.push({ name, atMs: T0 + i * WEEK_MS, value: 0.2 + 0.05 * k + 0.03 * Math.cos(i + k) });
  });
  return { projectName: 'Northwind Outdoor', engines, rivals: { brand: 'Northwind', points } };
}

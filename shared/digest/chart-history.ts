/**
 * The history the trend chart is drawn from, kept in the project's snapshot (`trend`): each run's
 * figure per engine over the last 8 weeks. Pure and bounded, so the snapshot stays far inside
 * DynamoDB's 400 KB: one point per UTC day (the newest run of a day; a chart of 8 weeks cannot show
 * more), at most `TREND_LIMITS.points` points and `TREND_LIMITS.engines` engines per point, values
 * rounded to 3 decimals. A snapshot written before the chart (no `trend`) is read as one point: its
 * last run's engine figures.
 *
 * Only the engines' figures are kept. The spec names rivals only as the winners of the project's gaps
 * (prompt counts, `SnapshotPoint.rivals`), not as a figure the brand has too, so there is no honest
 * "brand against its rivals" panel to draw from it (the renderer's second panel stays unused).
 */
import type { TrendChartInput } from '../charts/types';
import type { ProjectSnapshot, TrendPoint } from '../ports';
import type { VisibilityOverview } from '../read-api-types';
import { engineFigures } from './snapshot';

const DAY_MS = 24 * 3600 * 1000;

export const TREND_LIMITS = {
  /** The chart's window: points older than this before the newest are dropped. */
  windowMs: 8 * 7 * DAY_MS,
  /** One per day over the window, and the current run. */
  points: 57,
  /** Engines per point: the chart draws at most 8 lines; a few more keep a line when one engine drops out. */
  engines: 12,
} as const;

/** The stored trend of `previous`, oldest first (a snapshot from before the chart: its last run, when it has engine figures). */
export function trendOf(previous: ProjectSnapshot | null): TrendPoint[] {
  if (previous === null) return [];
  if (Array.isArray(previous.trend)) return previous.trend.filter(isPoint);
  const atMs = Date.parse(previous.lastCreatedAt);
  const engines = previous.engines === undefined ? {} : boundedEngines(previous.engines);
  return Number.isFinite(atMs) && Object.keys(engines).length > 0 ? [{ atMs, engines }] : [];
}

/**
 * The trend after this run: the stored points without the run's day (the newest run of a day stands
 * for it), this run's engine figures, the window and the count applied. A run without a usable
 * engine figure adds no point.
 */
export function nextTrend(previous: ProjectSnapshot | null, createdAt: string, engines: VisibilityOverview['engines']): TrendPoint[] {
  const atMs = Date.parse(createdAt);
  const earlier = trendOf(previous);
  if (!Number.isFinite(atMs)) return earlier.slice(-TREND_LIMITS.points);
  const figures = boundedEngines(engineFigures(engines));
  const day = Math.floor(atMs / DAY_MS);
  const kept = earlier.filter((p) => Math.floor(p.atMs / DAY_MS) !== day || Object.keys(figures).length === 0);
  const points = Object.keys(figures).length === 0 ? kept : [...kept, { atMs, engines: figures }];
  const newest = Math.max(...points.map((p) => p.atMs));
  return points
    .filter((p) => p.atMs >= newest - TREND_LIMITS.windowMs)
    .sort((a, b) => a.atMs - b.atMs)
    .slice(-TREND_LIMITS.points);
}

/** The renderer's input: every engine figure of every point (the renderer picks the lines and cleans the names). */
export function trendChartInput(projectName: string, trend: readonly TrendPoint[]): TrendChartInput {
  return {
    projectName,
    engines: trend.flatMap((point) => Object.entries(point.engines).map(([engine, value]) => ({ engine, atMs: point.atMs, value }))),
  };
}

/**
 * Figures the chart can draw (a share: 0–100, or 0–1 as a fraction), first `TREND_LIMITS.engines`
 * in API order. An engine whose main figure is a count (e.g. mentions) is left out rather than drawn
 * on a percent axis.
 */
function boundedEngines(figures: Readonly<Record<string, number>>): Record<string, number> {
  const kept = Object.entries(figures)
    .filter(([, value]) => Number.isFinite(value) && value >= 0 && value <= 100)
    .slice(0, TREND_LIMITS.engines)
    .map(([name, value]) => [name, Math.round(value * 1000) / 1000] as const);
  // fromEntries defines own properties: an engine called "__proto__" is stored as data.
  return Object.fromEntries(kept);
}

function isPoint(value: unknown): value is TrendPoint {
  if (typeof value !== 'object' || value === null) return false;
  const { atMs, engines } = value as Partial<TrendPoint>;
  return typeof atMs === 'number' && Number.isFinite(atMs) && typeof engines === 'object' && engines !== null;
}

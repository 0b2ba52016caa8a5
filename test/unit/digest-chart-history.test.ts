/** The trend the chart is drawn from: bounded (8 weeks, one point a day, 12 engines), old snapshots read, shares only. */
import { describe, expect, it } from 'vitest';
import { nextTrend, TREND_LIMITS, trendChartInput, trendOf } from '../../shared/digest/chart-history';
import type { ProjectSnapshot } from '../../shared/ports';
import type { GenericRow } from '../../shared/read-api-types';

const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 0, 1, 9);

function engines(values: Record<string, number>): GenericRow[] {
  return Object.entries(values).map(([engine, visibility]) => [
    ['engine', engine],
    ['visibility', visibility],
  ]);
}

function snapshot(extra: Partial<ProjectSnapshot>): ProjectSnapshot {
  return { projectId: 'p', lastCreatedAt: new Date(T0).toISOString(), lastRunId: 'r', metrics: {}, gaps: [], ...extra };
}

/** Folds runs at the given times into a trend, as successive digests do. */
function runs(times: number[], values: Record<string, number> = { ChatGPT: 40, Gemini: 50 }) {
  let previous: ProjectSnapshot | null = null;
  for (const at of times) {
    const trend = nextTrend(previous, new Date(at).toISOString(), engines(values));
    previous = snapshot({ lastCreatedAt: new Date(at).toISOString(), trend });
  }
  return previous?.trend ?? [];
}

describe('the chart history', () => {
  it('keeps one point per run, oldest first, each engine by name', () => {
    const trend = runs([T0, T0 + 7 * DAY, T0 + 14 * DAY]);
    expect(trend.map((p) => p.atMs)).toEqual([T0, T0 + 7 * DAY, T0 + 14 * DAY]);
    expect(trend[0]?.engines).toEqual({ ChatGPT: 40, Gemini: 50 });
    expect(trendChartInput('Acme', trend).engines).toHaveLength(6);
  });

  it('keeps 8 weeks and one point a day (the newest run of the day), whatever the cadence', () => {
    const hourlyFor10Weeks = Array.from({ length: 70 * 24 }, (_, i) => T0 + i * 3600 * 1000);
    const trend = runs(hourlyFor10Weeks);
    const newest = hourlyFor10Weeks.at(-1)!;
    expect(trend.length).toBeLessThanOrEqual(TREND_LIMITS.points);
    expect(trend.at(-1)?.atMs).toBe(newest);
    expect(trend.every((p) => p.atMs >= newest - 8 * 7 * DAY)).toBe(true);
    expect(new Set(trend.map((p) => Math.floor(p.atMs / DAY))).size).toBe(trend.length);
  });

  it('bounds the engines per point and keeps only figures a percent axis can show', () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`Engine ${i}`, i]));
    expect(Object.keys(runs([T0], many)[0]?.engines ?? {})).toHaveLength(TREND_LIMITS.engines);
    expect(runs([T0], { ChatGPT: 45.12345, Mentions: 340, Odd: -2 })[0]?.engines).toEqual({ ChatGPT: 45.123 });
  });

  it('reads a snapshot from before the chart as one point (its last run), and one without engines as none', () => {
    const old = snapshot({ engines: { ChatGPT: 40 } });
    expect(trendOf(old)).toEqual([{ atMs: T0, engines: { ChatGPT: 40 } }]);
    expect(trendOf(snapshot({}))).toEqual([]);
    expect(nextTrend(old, new Date(T0 + 7 * DAY).toISOString(), engines({ ChatGPT: 44 })).map((p) => p.engines['ChatGPT'])).toEqual([
      40, 44,
    ]);
  });

  it('adds no point for a run without engine figures, and survives a damaged stored trend', () => {
    const stored = snapshot({ trend: [{ atMs: T0, engines: { ChatGPT: 40 } }, null as never, { atMs: 'x' } as never] });
    expect(nextTrend(stored, new Date(T0 + DAY).toISOString(), [])).toEqual([{ atMs: T0, engines: { ChatGPT: 40 } }]);
  });
});

/**
 * `npm start`'s demo history: before the demo run, the demo project's snapshot is given 8 weeks of
 * back-dated daily runs, so its first digest is a real digest (deltas, "vs last week") with the trend
 * chart in its thread, and `npx bridge trigger weekly` has a week to report, without waiting 8 weeks.
 *
 * The runs are built from the project's current figures as the read API serves them (the simulator),
 * walked back in time: each engine's figure drifts linearly by a few points over the 8 weeks plus a
 * little daily noise (seeded by the project id: the same picture every start), the numeric metrics
 * likewise by a few percent. Each run goes through the digest's own `buildSnapshot` and `nextTrend`,
 * and the result is stored once through the digest store port: the snapshot is exactly what the digest
 * would have stored had it digested those runs. The newest seeded run has today's figures, so the demo
 * run's digest shows what the simulator really changed.
 *
 * Only `npm start` calls this (local/start.ts, through `sendDemoRun`); test stacks keep their
 * baseline first digest. A project that already has a snapshot (kept from an earlier start) is left alone.
 */
import { DynamoDigestStore } from '../shared/adapters/dynamo-digest-store';
import { ReadApiClient } from '../shared/adapters/read-api';
import { nextTrend } from '../shared/digest/chart-history';
import { rowPrimaryValue } from '../shared/digest/rows';
import { buildSnapshot } from '../shared/digest/snapshot';
import type { ProjectSnapshot } from '../shared/ports';
import type { GenericRow, Metric, VisibilityOverview } from '../shared/read-api-types';
import { deterministicUuid, rngFor, type Rng } from './simulator/random';
import type { LocalStack } from './stack';
import { demoSent, markDemoSent } from './stack/state';
import type { SentRun } from './simulator/webhooks';

const DAY_MS = 24 * 3600 * 1000;

export const DEMO_HISTORY = {
  /** Back-dated daily runs: 8 weeks, the trend chart's whole window. */
  days: 56,
  /** Largest drift of an engine's figure over the 8 weeks, in points (either way). */
  engineDriftPts: 12,
  /** Daily noise of an engine's figure, in points (either way). */
  engineNoisePts: 1.5,
  /** Largest drift of a numeric metric over the 8 weeks, as a fraction of its value now. */
  metricDrift: 0.15,
} as const;

export type DemoHistoryOutcome = { seeded: true; runs: number } | { seeded: false; reason: string };

/** The stack's digest store and read API, as the digest function builds them. */
function portsOf(stack: LocalStack) {
  const store = new DynamoDigestStore(stack.dynamo.client, {
    tableName: stack.dynamo.tableName,
    leaseMs: 60_000,
    retentionSeconds: 3600,
  });
  const readApi = new ReadApiClient({ baseUrl: stack.simulatorUrl, apiKey: stack.apiKey, timeoutMs: 5000, maxRateLimitRetries: 1 });
  return { store, readApi };
}

/**
 * Seeds `projectId`'s snapshot with `DEMO_HISTORY.days` daily runs ending the day before `nowMs`.
 * Simulator data only: with the real read API the history is the service's own.
 */
export async function seedDemoHistory(stack: LocalStack, projectId: string, nowMs: number = Date.now()): Promise<DemoHistoryOutcome> {
  if (!stack.simulator) return { seeded: false, reason: 'the read API is the real service' };
  const { store, readApi } = portsOf(stack);
  if ((await store.getSnapshot(projectId)) !== null) return { seeded: false, reason: 'the project already has a history' };
  const [overview, { gaps }] = await Promise.all([readApi.getVisibility(projectId), readApi.getGapsWithSkipped(projectId)]);
  const walk = historyWalk(overview, rngFor('demo-history', projectId));
  let snapshot: ProjectSnapshot | null = null;
  for (let daysAgo = DEMO_HISTORY.days; daysAgo >= 1; daysAgo -= 1) {
    const createdAt = new Date(nowMs - daysAgo * DAY_MS).toISOString();
    const past = walk(daysAgo);
    const run = {
      projectId,
      runId: deterministicUuid('demo-history', projectId, daysAgo),
      createdAt,
      answers: 200 + Math.round(40 * Math.sin(daysAgo)),
    };
    const trend = nextTrend(snapshot, createdAt, past.engines);
    snapshot = { ...buildSnapshot(run, past, gaps, snapshot), trend };
  }
  if (snapshot === null) return { seeded: false, reason: 'no days to seed' };
  await store.putSnapshot(snapshot);
  return { seeded: true, runs: DEMO_HISTORY.days };
}

export type DemoRunOutcome =
  { sent: true; history: DemoHistoryOutcome; run: SentRun } | { sent: false; reason: 'sent_before' | 'real_read_api' | 'no_project' };

/**
 * `npm start`'s demo: the first project's history seeded, then one run of it sent to the webhook.
 * Once per data directory: a restart that keeps the state does not send it again.
 */
export async function sendDemoRun(stack: LocalStack): Promise<DemoRunOutcome> {
  const projectId = stack.projectIds[0];
  if (!stack.simulator) return { sent: false, reason: 'real_read_api' };
  if (projectId === undefined) return { sent: false, reason: 'no_project' };
  if (stack.dataDir !== undefined && demoSent(stack.dataDir)) return { sent: false, reason: 'sent_before' };
  const history = await seedDemoHistory(stack, projectId);
  const run = stack.simulator.triggerRun(projectId);
  if (stack.dataDir !== undefined) markDemoSent(stack.dataDir);
  return { sent: true, history, run };
}

/** The overview `daysAgo` days before `now`: each figure walked back from its value now. */
function historyWalk(now: VisibilityOverview, rng: Rng): (daysAgo: number) => VisibilityOverview {
  // One drift per engine and per metric, fixed for the whole walk; the noise differs every day.
  const engineDrift = now.engines.map(() => (rng() * 2 - 1) * DEMO_HISTORY.engineDriftPts);
  const metricDrift = now.metrics.map(() => (rng() * 2 - 1) * DEMO_HISTORY.metricDrift);
  const noise = Array.from({ length: DEMO_HISTORY.days + 1 }, () => now.engines.map(() => (rng() * 2 - 1) * DEMO_HISTORY.engineNoisePts));
  return (daysAgo) => {
    const back = daysAgo / DEMO_HISTORY.days;
    return {
      ...now,
      engines: now.engines.map((row, i) => engineRow(row, -(engineDrift[i] ?? 0) * back + (noise[daysAgo]?.[i] ?? 0))),
      metrics: now.metrics.map((metric, i) => pastMetric(metric, 1 - (metricDrift[i] ?? 0) * back)),
      alerts: [],
    };
  };
}

/** The row with its main figure moved by `deltaPts` (kept within 0–100). */
function engineRow(row: GenericRow, deltaPts: number): GenericRow {
  const primary = rowPrimaryValue(row);
  if (primary === null) return row;
  const value = Math.round(Math.min(100, Math.max(0, primary.value + deltaPts)) * 10) / 10;
  return row.map(([field, raw]) => [field, field === primary.field ? value : raw] as const);
}

/** A numeric metric scaled by `factor`, rounded like its value now (whole numbers stay whole); others as they are. */
function pastMetric(metric: Metric, factor: number): Metric {
  if (typeof metric.value !== 'number' || !Number.isFinite(metric.value)) return metric;
  const scaled = Math.max(0, metric.value * factor);
  const value = Number.isInteger(metric.value) ? Math.round(scaled) : Math.round(scaled * 10) / 10;
  return { ...metric, value: metric.value <= 100 ? Math.min(100, value) : value };
}

/** The queue's `weekly_sweep` kind (the stack's schedule, `bridge trigger weekly`): one sweep of the due reports (./sweep.ts). */
import type { Log } from '../ports';
import { eachAlone, type KindHandler, type RecordResult } from '../queue-work';
import { PacedChannel } from '../pacing';
import { trendChartInput, trendOf } from '../digest/chart-history';
import { threadChart, type ChartDeps } from '../digest/chart-step';
import type { WeeklyChartHook, WeeklyDeps, WeeklySweepMessage } from './ports';
import { runWeeklySweep } from './sweep';
import { describeError } from '../observability';
import { STACK_TENANT, tenantLabel } from '../tenancy';

export interface WeeklySweepKindDeps {
  log: Log;
  /** None = weekly reports are not set up: a sweep message is acknowledged and does nothing. */
  reports: WeeklyDeps | undefined;
  /** Each active connection's reports (its stores, read API and routes); none = the stack's alone. */
  tenants?: (() => Promise<WeeklyDeps[]>) | undefined;
}

/** What a report's charts need: the digest's snapshots (each project's trend) and the channel's pace. */
export type WeeklyChartDeps = Pick<WeeklyDeps, 'digests' | 'slack' | 'pacer' | 'clock' | 'log' | 'metrics' | 'deadline' | 'sleep'>;

export const sweepWeeklyReports: KindHandler<WeeklySweepMessage, WeeklySweepKindDeps> = eachAlone(sweepWeekly);

/** Each project's trend chart in its weekly report's thread, from its stored trend; none when charts are off. */
export function weeklyCharts(charts: ChartDeps | undefined, deps: WeeklyChartDeps): WeeklyChartHook | undefined {
  if (charts === undefined) return undefined;
  return async ({ channel, ts, projects }) => {
    const paced = new PacedChannel(channel, deps);
    for (const project of projects) {
      const snapshot = await deps.digests.getSnapshot(project.id);
      if (snapshot === null) continue;
      const chart = threadChart(trendChartInput(project.name, trendOf(snapshot)), charts, deps);
      await chart.postInThread({ channel, threadTs: ts, paced, slack: deps.slack, eventId: `weekly#${channel}#${project.id}` });
    }
  };
}

async function sweepWeekly(request: WeeklySweepMessage, deps: WeeklySweepKindDeps): Promise<RecordResult> {
  if (deps.reports === undefined) {
    deps.log.warn('weekly sweep ignored: weekly reports are not set up in this runtime');
    return 'ignored';
  }
  const { kind: _kind, ...sweep } = request;
  await runWeeklySweep(sweep, deps.reports);
  // Each connection's reports after the stack's, each tenant over its own stores; one that fails waits for the next sweep.
  for (const reports of (await deps.tenants?.()) ?? []) {
    try {
      await runWeeklySweep(sweep, reports);
    } catch (error) {
      deps.log.error("a connection's weekly reports failed: the next sweep tries again", {
        tenant: tenantLabel(reports.tenant ?? STACK_TENANT),
        ...describeError(error),
      });
    }
  }
  return 'swept';
}

/**
 * The weekly sweep: the stack's schedule (every `SWEEP_MINUTES`) puts a `weekly_sweep` message on the
 * digest queue; the digest function posts every channel's report that is due (./schedule.ts).
 *
 * Which channels: the home channels (the stage's `slackDefaultChannel` and `projectChannels`) unless
 * they said `/visibility weekly off`, and every channel that said `weekly on` or set a day. A message
 * naming one channel (`bridge trigger weekly --channel`) is held to the same set: a channel that is
 * neither home nor opted in is refused and logged, never posted to (the queue is no way in). Exactly
 * once per channel and week: `weekly#<channel>#<ISO week>` is claimed first (a lease, like the
 * digest's claims), the message's ts recorded the moment Slack returns it, and a retry after an
 * attempt whose outcome is unknown first asks Slack (the report's metadata) before posting again.
 * Paced like digests (the channel pacer). A channel that fails is counted (`WeeklyReportFailed`,
 * alarmed), its claim released, and the next sweep tries again; the sweep itself always succeeds,
 * so one bad channel never holds up the others or sends the sweep to the DLQ.
 */
import { DIGEST_METRICS } from '../contracts';
import { ChannelPaceDeferred } from '../errors';
import { describeError } from '../observability';
import { PacedChannel } from '../pacing';
import type { SlackMessage, SlackMessageMetadata } from '../ports';
import { homeChannel } from '../routing';
import { baselineOf, projectWeek, weekEndingAt } from './content';
import { STACK_TENANT, type Tenant } from '../tenancy';
import type { WeeklyDeps, WeeklySchedule, WeeklySweepMessage } from './ports';
import { renderWeeklyReport } from './render';
import { describeSchedule, dueNow, effectiveSchedule, isoWeekAt } from './schedule';

/** A channel is not started with less time than this left: its post, baselines and claim must fit. */
export const CHANNEL_BUDGET_MS = 10_000;
/** Metadata event type of a report (a retry finds an earlier attempt's post by it). */
export const WEEKLY_EVENT_TYPE = 'visibility_weekly_report';

/** `refused`: a channel named by the message that is neither a home channel nor opted in. */
export type ChannelResult = 'posted' | 'already' | 'busy' | 'deferred' | 'failed' | 'off' | 'refused';

export interface SweepResult {
  /** Channel → what happened, for the channels that were due (or named). */
  channels: Record<string, ChannelResult>;
  /** Due channels left for the next sweep because the invocation's time ran out. */
  leftForNextSweep: string[];
}

interface DueChannel {
  channel: string;
  week: string;
  schedule: WeeklySchedule;
}

/** The report's id in its metadata: unique per channel, week and tenant (a connection's report is its own). */
export function weeklyReportId(channel: string, week: string, tenant: Tenant = STACK_TENANT): string {
  return tenant.kind === 'stack' ? `weekly:${channel}:${week}` : `weekly:${tenant.connectionId}:${channel}:${week}`;
}

function homeChannels(deps: WeeklyDeps): string[] {
  const { defaultChannel, projectChannels } = deps.options;
  return [...new Set([defaultChannel, ...Object.values(projectChannels)].map((c) => c.trim()).filter((c) => c !== ''))];
}

/** The channels whose report is due now (or the one named, at once when `now`). */
async function dueChannels(
  request: Omit<WeeklySweepMessage, 'kind'>,
  deps: WeeklyDeps,
): Promise<{ due: DueChannel[]; off: string[]; refused: string[] }> {
  const settings = await deps.store.settings();
  const nowMs = deps.clock.now();
  const named = request.channel;
  // A named channel the bridge has no reason to report to: not home, never said `weekly on` or a day.
  if (named !== undefined && !homeChannels(deps).includes(named) && !settings.has(named)) {
    deps.log.warn('weekly sweep refused: the channel it names is neither a home channel nor opted in', { channel: named });
    return { due: [], off: [], refused: [named] };
  }
  const candidates = await ownChannels(
    deps,
    named !== undefined ? [named] : [...new Set([...homeChannels(deps), ...[...settings].filter(([, s]) => s.enabled).map(([c]) => c)])],
  );
  const due: DueChannel[] = [];
  const off: string[] = [];
  for (const channel of candidates) {
    const setting = settings.get(channel);
    if (setting?.enabled === false) {
      if (request.channel !== undefined) off.push(channel);
      continue;
    }
    const schedule = effectiveSchedule(setting, deps.options.timeZone);
    if (request.now === true) {
      due.push({ channel, week: isoWeekAt(nowMs, schedule.timeZone), schedule });
      continue;
    }
    const when = dueNow(schedule, nowMs, setting?.changedAtMs);
    if (when.due) due.push({ channel, week: when.week, schedule });
  }
  return { due, off, refused: [] };
}

/**
 * A connection's reports go to its home channels and to opted-in channels it has subscriptions in: a
 * channel's schedule is the channel's, and a tenant with nothing there has nothing to report to it.
 */
async function ownChannels(deps: WeeklyDeps, candidates: string[]): Promise<string[]> {
  if ((deps.tenant ?? STACK_TENANT).kind === 'stack') return candidates;
  const home = homeChannels(deps);
  const held = await Promise.all(candidates.map(async (c) => home.includes(c) || (await deps.subscriptions.forChannel(c)).length > 0));
  return candidates.filter((_, i) => held[i]);
}

export async function runWeeklySweep(request: Omit<WeeklySweepMessage, 'kind'>, deps: WeeklyDeps): Promise<SweepResult> {
  const { due, off, refused } = await dueChannels(request, deps);
  const skipped = [...off.map((c) => [c, 'off'] as const), ...refused.map((c) => [c, 'refused'] as const)];
  const result: SweepResult = { channels: Object.fromEntries(skipped), leftForNextSweep: [] };
  for (const item of due) {
    const deadline = deps.deadline?.();
    if (deadline !== undefined && deadline - deps.clock.now() < CHANNEL_BUDGET_MS) {
      result.leftForNextSweep.push(item.channel);
      continue;
    }
    result.channels[item.channel] = await reportChannel(item, deps);
  }
  if (result.leftForNextSweep.length > 0)
    deps.log.warn('weekly reports left for the next sweep: no time left in this invocation', { channels: result.leftForNextSweep });
  return result;
}

/** One channel's week: claimed, posted once, baselines kept, finished; a failure counted and released. */
async function reportChannel(item: DueChannel, deps: WeeklyDeps): Promise<ChannelResult> {
  const { channel, week } = item;
  const claim = await claimOrFail(item, deps);
  if (claim === 'failed') return 'failed';
  if (claim.status === 'done') return 'already';
  if (claim.status === 'busy') return 'busy';
  try {
    const ts = claim.postedTs ?? (await earlierPost(item, claim, deps)) ?? (await postReport(item, claim.token, deps));
    await deps.store.finish(channel, week, claim.token);
    deps.log.info('weekly report posted', { channel, week, ts, attempt: claim.attempt });
    deps.metrics.count(DIGEST_METRICS.weeklyReportPosted);
    return 'posted';
  } catch (error) {
    if (error instanceof ChannelPaceDeferred) {
      await deps.store.release(channel, week, claim.token, 'deferred to keep the channel pace');
      deps.log.info("weekly report deferred to the next sweep to keep its channel's pace", { channel, week });
      return 'deferred';
    }
    return failed(item, claim.token, error, deps);
  }
}

async function claimOrFail(item: DueChannel, deps: WeeklyDeps) {
  try {
    return await deps.store.claim(item.channel, item.week, deps.clock.now());
  } catch (error) {
    return failed(item, undefined, error, deps);
  }
}

async function failed(item: DueChannel, token: string | undefined, error: unknown, deps: WeeklyDeps): Promise<'failed'> {
  const why = describeError(error);
  deps.metrics.count(DIGEST_METRICS.weeklyReportFailed);
  deps.log.error('weekly report failed: the next sweep tries again', { channel: item.channel, week: item.week, ...why });
  if (token !== undefined) {
    try {
      await deps.store.release(item.channel, item.week, token, `${why.errorName}: ${why.errorMessage}`);
    } catch (releaseError) {
      // The lease ends by itself; the next sweep after it takes the week over.
      deps.log.warn('weekly claim not released', { channel: item.channel, week: item.week, ...describeError(releaseError) });
    }
  }
  return 'failed';
}

/** After an attempt that may have posted (its outcome unknown), Slack says whether it did. */
async function earlierPost(
  item: DueChannel,
  claim: { attempt: number; firstClaimedMs: number; token: string },
  deps: WeeklyDeps,
): Promise<string | undefined> {
  if (claim.attempt <= 1) return undefined;
  const ts = await deps.slack.findPosted(
    item.channel,
    weeklyReportId(item.channel, item.week, deps.tenant),
    Math.floor(claim.firstClaimedMs / 1000),
  );
  if (ts !== undefined) await deps.store.recordPosted(item.channel, item.week, claim.token, ts);
  return ts;
}

/** The channel's projects: its subscriptions (not muted, not broken) and the projects it is home to. */
async function channelProjects(channel: string, deps: WeeklyDeps): Promise<{ id: string; name: string }[]> {
  const nowMs = deps.clock.now();
  const subscriptions = await deps.subscriptions.forChannel(channel);
  const skipped = new Set(
    subscriptions.filter((s) => (s.mutedUntilMs !== undefined && s.mutedUntilMs > nowMs) || s.broken !== undefined).map((s) => s.projectId),
  );
  const projects = new Map(subscriptions.filter((s) => !skipped.has(s.projectId)).map((s) => [s.projectId, s.projectName]));
  if (homeChannels(deps).includes(channel)) {
    const routing = { defaultChannel: deps.options.defaultChannel, projectChannels: deps.options.projectChannels };
    for (const project of await deps.listProjects())
      if (homeChannel(project.id, routing)?.channel === channel && !skipped.has(project.id) && !projects.has(project.id))
        projects.set(project.id, project.name);
  }
  return [...projects].map(([id, name]) => ({ id, name }));
}

async function postReport(item: DueChannel, token: string, deps: WeeklyDeps): Promise<string> {
  const { channel, week } = item;
  const nowMs = deps.clock.now();
  const projects = await channelProjects(channel, deps);
  const window = weekEndingAt(nowMs);
  const inputs = await Promise.all(
    projects.map(async (project) => {
      const [snapshot, baseline] = await Promise.all([deps.digests.getSnapshot(project.id), deps.store.baseline(channel, project.id)]);
      return { project, snapshot, baseline };
    }),
  );
  const weeks = inputs.map(({ project, snapshot, baseline }) =>
    projectWeek(project, snapshot, baseline, window, deps.options.noiseMinimums),
  );
  const report = renderWeeklyReport(weeks, window, {
    dashboardUrlTemplate: deps.options.dashboardUrlTemplate,
    scheduleText: describeSchedule(item.schedule),
  });
  const metadata: SlackMessageMetadata = {
    event_type: WEEKLY_EVENT_TYPE,
    event_payload: { event_id: weeklyReportId(channel, week, deps.tenant), week, channel },
  };
  const paced = new PacedChannel(channel, deps);
  await paced.reserve(1 + report.thread.length);
  const posted = await paced.post((retryRateLimited) => deps.slack.post(channel, report.main, { metadata, retryRateLimited }));
  // Slack refused the portfolio chart: the report went with its words instead.
  if (posted.nativeRefused === true) deps.metrics.count(DIGEST_METRICS.nativeBlockRefused, 1, { block: 'data_visualization' });
  // First: from here on a retry finishes the week instead of posting it again.
  await deps.store.recordPosted(channel, week, token, posted.ts);
  await keepBaselines(channel, inputs, nowMs, deps);
  await postDetails(channel, posted.ts, report.thread, paced, deps);
  // files.completeUploadExternal takes channel ids only: the one Slack answered, not a configured name.
  await attachChart(posted.channel, posted.ts, projects, deps);
  return posted.ts;
}

/** Next week's "opened / closed": a baseline that can't be written is logged; next week then says it has none. */
async function keepBaselines(
  channel: string,
  inputs: readonly { project: { id: string }; snapshot: Parameters<typeof baselineOf>[1] }[],
  nowMs: number,
  deps: WeeklyDeps,
): Promise<void> {
  const results = await Promise.allSettled(inputs.map((i) => deps.store.putBaseline(channel, baselineOf(i.project.id, i.snapshot, nowMs))));
  for (const r of results)
    if (r.status === 'rejected')
      deps.log.warn('weekly baseline not stored: next report lists no opened/closed gaps', { channel, ...describeError(r.reason) });
}

/** The report's details in its thread, right after it (like its charts: posted once, a failure logged). */
async function postDetails(
  channel: string,
  ts: string,
  replies: readonly SlackMessage[],
  paced: PacedChannel,
  deps: WeeklyDeps,
): Promise<void> {
  try {
    for (const reply of replies)
      await paced.post((retryRateLimited) => deps.slack.post(channel, reply, { threadTs: ts, retryRateLimited }));
  } catch (error) {
    deps.log.warn('weekly report details not posted in its thread', { channel, ts, ...describeError(error) });
  }
}

async function attachChart(
  channel: string,
  ts: string,
  projects: readonly { id: string; name: string }[],
  deps: WeeklyDeps,
): Promise<void> {
  if (deps.chart === undefined || projects.length === 0) return;
  try {
    await deps.chart({ channel, ts, projects });
  } catch (error) {
    deps.log.warn('weekly report chart not attached', { channel, ...describeError(error) });
  }
}

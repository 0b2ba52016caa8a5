/**
 * The App Home portfolio's model (pure but for `loadPortfolio`'s reads): every project the read key
 * sees, with what the bridge stored of it — the mark and headline its latest digest gave it (the
 * snapshot's `lastVerdict`, never judged again), this week's pooled change of its headline metric and
 * its top rival (the weekly report's verdict, ../../weekly/content.ts), when it last ran, which channels
 * get its digests (routing, as a run would be routed now) and whether any is muted, quiet or broken,
 * and where its latest digest is. Sorted worst first by the verdict model's outputs alone.
 */
import type { ChannelRouting } from '../../digest/deps';
import { isQuietAt } from '../../digest/quiet-hours';
import type { NoiseMinimums } from '../../digest/noise';
import { describeError } from '../../observability';
import type {
  Clock,
  DigestStore,
  Log,
  ProjectSnapshot,
  QuietHoursStore,
  QuietSetting,
  RunMark,
  RunVerdict,
  Subscription,
  SubscriptionStore,
} from '../../ports';
import type { Project } from '../../read-api-types';
import { homeChannel, routeDigest } from '../../routing';
import { projectWeek, weekEndingAt, type WeekOutcome } from '../../weekly/content';
import type { WeeklyVerdict } from '../../weekly/verdict';
import { latestRunVerdict } from '../status';
import type { ProjectDirectory } from '../ports';

/** How a channel stands for a project's digests now. */
export type ChannelState = 'delivered' | 'muted' | 'quiet' | 'broken';

export interface PortfolioChannel {
  channel: string;
  /** The project's home channel (configuration): it gets every digest. */
  home: boolean;
  state: ChannelState;
}

export interface PortfolioEntry {
  project: Pick<Project, 'id' | 'name'>;
  /** The mark and headline the latest run's digest gave it; null before a digest stored one. */
  latest: RunVerdict | null;
  /** The latest digested run's `created_at`; undefined when never digested. */
  lastRunAt: string | undefined;
  /** This week's outcome (the weekly report's, pooled): worse, better, mixed, steady… */
  week: WeekOutcome;
  /** The headline metric's week, pooled against last week's (significant or not); null without one. */
  headline: WeeklyVerdict | null;
  /** Its value in the latest run, when no week could be pooled (a first week, no runs this week). */
  latestValue: { label: string; value: number } | null;
  topRival: { name: string; prompts: number } | null;
  channels: PortfolioChannel[];
  /** The latest digest's message (its channel and ts; the home channel's first), for "Open latest digest". */
  latestDigest: { channel: string; ts: string } | null;
}

/** Marks worst first, as the verdict defines them: only bad news, bad and good, too thin to judge, only good, nothing called. */
export const MARK_SEVERITY: { readonly [M in RunMark]: number } = { '🔴': 0, '🟡': 1, '⚠️': 2, '🟢': 3, '⚪': 4 };
/** A project without a stored mark sorts after every marked one. */
const UNMARKED = 5;

/** Weeks worst first, as the weekly report's verdict calls them. */
export const WEEK_SEVERITY: { readonly [O in WeekOutcome]: number } = {
  worse: 0,
  mixed: 1,
  'no-data': 2,
  better: 3,
  steady: 4,
  first: 5,
  'no-runs': 6,
  never: 7,
};

/** Worst first: the latest mark, then this week's outcome, then the name (a stable order for paging). */
export function byWorstFirst(a: PortfolioEntry, b: PortfolioEntry): number {
  const mark = (e: PortfolioEntry) => (e.latest === null ? UNMARKED : MARK_SEVERITY[e.latest.mark]);
  return (
    mark(a) - mark(b) ||
    WEEK_SEVERITY[a.week] - WEEK_SEVERITY[b.week] ||
    a.project.name.localeCompare(b.project.name) ||
    a.project.id.localeCompare(b.project.id)
  );
}

export interface ProjectFacts {
  project: Pick<Project, 'id' | 'name'>;
  snapshot: ProjectSnapshot | null;
  subscriptions: readonly Subscription[];
}

/** One project's entry from what is stored of it, at `nowMs`. */
export function portfolioEntry(
  facts: ProjectFacts,
  routing: ChannelRouting,
  quiet: ReadonlyMap<string, QuietSetting>,
  nowMs: number,
  minimums: NoiseMinimums = {},
): PortfolioEntry {
  const { project, snapshot } = facts;
  const week = projectWeek(project, snapshot, null, weekEndingAt(nowMs), minimums);
  const headlineLabel = snapshot === null ? undefined : Object.keys(snapshot.metrics)[0];
  const headline = week.changes.find((c) => c.label === headlineLabel) ?? null;
  const channels = channelsOf(project.id, facts.subscriptions, routing, quiet, nowMs);
  return {
    project,
    latest: snapshot === null ? null : latestRunVerdict(snapshot),
    lastRunAt: snapshot?.lastCreatedAt,
    week: week.outcome,
    headline,
    latestValue:
      headline === null && headlineLabel !== undefined && snapshot !== null
        ? { label: headlineLabel, value: snapshot.metrics[headlineLabel] ?? 0 }
        : null,
    topRival: week.topRival,
    channels,
    latestDigest: latestDigestOf(snapshot, channels),
  };
}

/** The channels a run would go to now (the home channel first), then those skipped, each with why. */
function channelsOf(
  projectId: string,
  subscriptions: readonly Subscription[],
  routing: ChannelRouting,
  quiet: ReadonlyMap<string, QuietSetting>,
  nowMs: number,
): PortfolioChannel[] {
  const route = routeDigest(
    projectId,
    subscriptions,
    { defaultChannel: routing.defaultChannel, projectChannels: routing.byProject },
    nowMs,
  );
  const quietNow = (channel: string) => {
    const setting = quiet.get(channel);
    return setting !== undefined && isQuietAt(setting.window, nowMs);
  };
  const delivered = route.deliveries.map((d): PortfolioChannel => ({
    channel: d.channel,
    home: d.home,
    state: quietNow(d.channel) ? 'quiet' : 'delivered',
  }));
  const home = homeChannel(projectId, { defaultChannel: routing.defaultChannel, projectChannels: routing.byProject })?.channel;
  const skipped = route.skipped.map((s): PortfolioChannel => ({ channel: s.channel, home: s.channel === home, state: s.reason }));
  return [...delivered, ...skipped].sort((a, b) => Number(b.home) - Number(a.home));
}

/** The latest digest's message: the home channel's thread when it has one, else any channel's. */
function latestDigestOf(snapshot: ProjectSnapshot | null, channels: readonly PortfolioChannel[]): PortfolioEntry['latestDigest'] {
  const threads = snapshot?.digestThreads ?? {};
  const home = channels.find((c) => c.home && threads[c.channel] !== undefined);
  const [channel, ts] = home !== undefined ? [home.channel, threads[home.channel]] : (Object.entries(threads)[0] ?? []);
  return channel !== undefined && ts !== undefined ? { channel, ts } : null;
}

export interface PortfolioDeps {
  directory: ProjectDirectory;
  snapshots: Pick<DigestStore, 'getSnapshot'>;
  store: Pick<SubscriptionStore, 'forProject'>;
  routing: ChannelRouting;
  /** The routes of a project's tenant (a connection's own, ../tenant-scope.ts); none or undefined = `routing`. */
  routingOf?: ((projectId: string) => ChannelRouting | undefined) | undefined;
  /** Channels' quiet hours; none = no channel is ever quiet. */
  quietHours?: Pick<QuietHoursStore, 'windowsOf'> | undefined;
  noiseMinimums?: NoiseMinimums | undefined;
  clock: Clock;
  log: Log;
}

/** Projects read at once: each costs two small table reads. */
const READ_CONCURRENCY = 8;

/** Every project the read key sees, worst first. The read API failing throws (the publish is retried). */
export async function loadPortfolio(deps: PortfolioDeps): Promise<PortfolioEntry[]> {
  const projects = await deps.directory.listProjects();
  const facts = await inBatches(projects, READ_CONCURRENCY, async (project): Promise<ProjectFacts> => {
    const [snapshot, subscriptions] = await Promise.all([deps.snapshots.getSnapshot(project.id), deps.store.forProject(project.id)]);
    return { project: { id: project.id, name: project.name }, snapshot, subscriptions };
  });
  const routingOf = (projectId: string) => deps.routingOf?.(projectId) ?? deps.routing;
  const quiet = await quietWindows(facts, routingOf, deps);
  const nowMs = deps.clock.now();
  return facts.map((f) => portfolioEntry(f, routingOf(f.project.id), quiet, nowMs, deps.noiseMinimums)).sort(byWorstFirst);
}

/** The quiet hours of every channel named; a failed read only leaves "quiet" out (logged). */
async function quietWindows(
  facts: readonly ProjectFacts[],
  routingOf: (projectId: string) => ChannelRouting,
  deps: PortfolioDeps,
): Promise<ReadonlyMap<string, QuietSetting>> {
  if (deps.quietHours === undefined) return new Map();
  const channels = new Set<string>();
  for (const routing of [deps.routing, ...facts.map((f) => routingOf(f.project.id))]) {
    if (routing.defaultChannel !== '') channels.add(routing.defaultChannel);
    for (const channel of Object.values(routing.byProject)) channels.add(channel);
  }
  for (const f of facts) for (const s of f.subscriptions) channels.add(s.channel);
  try {
    return await deps.quietHours.windowsOf([...channels]);
  } catch (error) {
    deps.log.warn('App Home without quiet hours: they could not be read', describeError(error));
    return new Map();
  }
}

async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}

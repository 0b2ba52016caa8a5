/**
 * Between routing and posting, a channel's own settings decide whether it gets this run now:
 * 1. its filter (stored with its subscription, ./channel-filter.ts) may leave nothing of the run: not
 *    posted there, logged like a mute and counted (`DigestFiltered`);
 * 2. its quiet hours (./quiet-hours.ts) may be on: the run is held for the catch-up (./held-digests.ts),
 *    logged and counted (`DigestHeld`). A hold that fails skips that channel alone (logged, counted
 *    `DigestHoldFailed`, alarmed): the run goes on in its other channels.
 * The channels left are posted as before. A filtered channel is never held (nothing to catch up on).
 */
import { DIGEST_METRICS } from '../contracts';
import type { WebhookEvent } from '../events';
import { describeError } from '../observability';
import type { Log, Metrics, QuietWindow } from '../ports';
import { describeFilter, isEmptyFilter, type ChannelFilter } from './channel-filter';
import { filterOf, type RunViews } from './channel-views';
import type { ChannelTarget } from './fan-out';
import { quietNow, type QuietHoursStore } from './held-digests';
import { describeWindow, quietEndsAt } from './quiet-hours';
import { digestHeadline } from './render';
import type { DigestModel } from './render/model';
import { assess } from './render/significance';

export interface GateDeps {
  quietHours?: QuietHoursStore | undefined;
  clock: { now(): number };
  log: Log;
  metrics: Metrics;
}

export interface GateRun {
  event: WebhookEvent;
  projectId: string;
  /** The run's model and each channel's (its filter applied): the channel's headline is the held run's. */
  views: RunViews;
  /** The run's dashboard page, when the template gives one. */
  link: string | null;
}

/** The targets to post to now; the others are left out (filtered) or held (quiet hours). */
export async function gateChannels(run: GateRun, targets: readonly ChannelTarget[], deps: GateDeps): Promise<ChannelTarget[]> {
  const open = targets.filter((target) => !leftOutByFilter(run, target, deps));
  const { quietHours } = deps;
  if (!quietHours || open.length === 0) return open;
  const nowMs = deps.clock.now();
  const settings = await quietHours.windowsOf(open.map((t) => t.channel));
  const post: ChannelTarget[] = [];
  for (const target of open) {
    const window = quietNow(settings.get(target.channel), nowMs);
    if (window === undefined) post.push(target);
    else await holdIn(quietHours, target, window, run, nowMs, deps);
  }
  return post;
}

/** Holds the run for the channel's catch-up; a hold that fails is that channel's loss alone (logged, counted, alarmed). */
async function holdIn(
  store: QuietHoursStore,
  target: ChannelTarget,
  window: QuietWindow,
  run: GateRun,
  nowMs: number,
  deps: GateDeps,
): Promise<void> {
  const catchUpAfterMs = quietEndsAt(window, nowMs);
  const about = { eventId: run.event.id, projectId: run.projectId, channel: target.channel, quietHours: describeWindow(window) };
  try {
    await store.hold(target.channel, {
      eventId: run.event.id,
      projectId: run.projectId,
      headline: digestHeadline(run.views.modelFor(target)),
      link: run.link ?? undefined,
      createdAt: run.event.created_at,
      heldAtMs: nowMs,
      catchUpAfterMs,
    });
  } catch (error) {
    deps.log.error('digest not held: the channel is in its quiet hours and the hold failed, so this run is not posted there', {
      ...about,
      ...describeError(error),
    });
    deps.metrics.count(DIGEST_METRICS.digestHoldFailed);
    return;
  }
  deps.log.info('digest held: the channel has quiet hours', { ...about, catchUpAfter: new Date(catchUpAfterMs).toISOString() });
  deps.metrics.count(DIGEST_METRICS.digestHeld);
}

function leftOutByFilter(run: GateRun, target: ChannelTarget, deps: GateDeps): boolean {
  const filter = filterOf(target);
  if (!filteredToNothing(run.views.run, run.views.filtered(target), filter) || filter === undefined) return false;
  deps.log.info('not posted to a channel whose filter left nothing of the run', {
    eventId: run.event.id,
    projectId: run.projectId,
    channel: target.channel,
    filter: describeFilter(filter),
  });
  deps.metrics.count(DIGEST_METRICS.digestFiltered);
  return true;
}

/** The changes called in the run, and its alerts. */
function newsOf(model: DigestModel): { changes: number; alerts: number } {
  return { changes: assess(model).changes.length, alerts: model.alerts.length };
}

/**
 * True when the filter took away everything this run had to tell this channel: the unfiltered run has a
 * change called or an alert; the filtered one calls no change, and has no alert at the level the channel
 * asked for (`alerts>=`; a filter without that term is about changes, so a standing project-wide alert
 * does not post every run). A first digest or an empty run always posts (it says so); a run with nothing
 * to tell anyway posts as the channel's mode says, filter or not.
 */
export function filteredToNothing(run: DigestModel, filtered: DigestModel, filter: ChannelFilter | undefined): boolean {
  if (filter === undefined || isEmptyFilter(filter)) return false;
  if (filtered.diff.firstDigest || filtered.emptyReason !== null) return false;
  const left = newsOf(filtered);
  if (left.changes > 0 || (filter.minAlertLevel !== undefined && left.alerts > 0)) return false;
  const all = newsOf(run);
  return all.changes > 0 || all.alerts > 0;
}

/**
 * The digest of a `run.completed` event. Exactly-once posting, as far as Slack allows: each event is
 * claimed in DynamoDB by its event id (not the SQS message id, which changes on replay), and each
 * channel it fans out to by event and channel (./fan-out); the top-level ts and the number of thread
 * replies are recorded after each post, so a retry continues where the failed attempt stopped, in the
 * channels not yet done. The only window left is a crash between Slack accepting a post and the
 * progress write.
 */
import { DIGEST_METRICS } from '../contracts';
import type { RunCompletedData, WebhookEvent } from '../events';
import { RateLimited } from '../errors';
import { describeError } from '../observability';
import type { Subscription } from '../ports';
import type { KindHandler, RecordResult, Settle, WorkItem } from '../queue-work';
import type { Gap, Project, ReasoningCard } from '../read-api-types';
import type { ActionValueCodec } from '../buttons/value';
import { nextTrend, trendChartInput } from './chart-history';
import { threadChart } from './chart-step';
import { gateChannels } from './channel-gate';
import { runViews } from './channel-views';
import { claimFor, finishUnrouted, projectOrId, underClaim, type Claimed } from './claim';
import type { DigestDeps, DigestOptions } from './deps';
import { channelsFor, postToChannels, type ChannelTarget } from './fan-out';
import { fillUrlTemplate } from './links';
import { deferIfPacedOut } from '../pacing';
import { findReasoningCard } from './reasoning-card';
import { renderModel, verdictOutcome } from './render';
import { buildSnapshot } from './snapshot';

/** A run.completed record, its data parsed. */
export type RunCompletedItem = WorkItem<{ event: WebhookEvent; data: RunCompletedData }>;

/** Several runs of one project in one batch make one digest: a job per project. */
export const digestRuns: KindHandler<RunCompletedItem['payload'], DigestDeps> = (items, deps, settle) =>
  [...groupByProject(items).values()].map((group) => () => digestProjectRuns(group, deps, settle));

function groupByProject(items: readonly RunCompletedItem[]): Map<string, RunCompletedItem[]> {
  const groups = new Map<string, RunCompletedItem[]>();
  for (const item of items) groups.set(item.payload.data.project_id, [...(groups.get(item.payload.data.project_id) ?? []), item]);
  return groups;
}

/**
 * Several runs of one project in one batch: the newest goes first and takes the newest-run mark, so
 * the others are superseded by digestRun itself, except one whose top-level message an earlier
 * attempt already posted: that one still finishes its thread.
 */
async function digestProjectRuns(group: readonly RunCompletedItem[], deps: DigestDeps, settle: Settle): Promise<void> {
  const newestFirst = [...group].sort((a, b) => Date.parse(b.payload.event.created_at) - Date.parse(a.payload.event.created_at));
  for (const item of newestFirst) await settle(item, () => digestRun(item.payload.event, item.payload.data, deps));
}

async function digestRun(event: WebhookEvent, run: RunCompletedData, deps: DigestDeps): Promise<RecordResult> {
  // The newest-run mark shares the claim's round trip. Setting it for an event that turns out to be
  // handled already is harmless: it only ever moves forward, to a real run's time.
  const [claimed, newest] = await Promise.allSettled([
    claimFor(event, deps),
    deps.store.markNewestRun(run.project_id, Date.parse(event.created_at), event.id),
  ]);
  if (claimed.status === 'rejected') throw claimed.reason;
  const claim = claimed.value;
  if (!claim) return 'duplicate';
  return underClaim<RecordResult>(event, claim.token, deps, async () => {
    if (newest.status === 'rejected') throw newest.reason;
    // A retry that already posted the top-level message finishes its thread whatever came since.
    if (!claim.progress.mainTs && !newest.value) return skipSuperseded(event, run, claim, deps);
    return postDigest(event, run, claim, deps);
  });
}

async function skipSuperseded(event: WebhookEvent, run: RunCompletedData, claim: Claimed, deps: DigestDeps): Promise<RecordResult> {
  deps.log.info('run superseded: a newer run of the project was already taken up', {
    eventId: event.id,
    projectId: run.project_id,
    createdAt: event.created_at,
  });
  deps.metrics.count(DIGEST_METRICS.eventSuperseded);
  await deps.store.finish(event.id, claim.token, 'skipped');
  return 'superseded';
}

/** Everything a digest is rendered from, read side by side. */
async function readDigestInputs(event: WebhookEvent, projectId: string, options: DigestOptions, deps: DigestDeps) {
  // The reasoning look-ups start as soon as the gaps arrive.
  const gapsAndReasoning = deps.readApi.getGapsWithSkipped(projectId).then(async ({ gaps, skipped }) => ({
    gaps,
    skipped,
    reasoning: await reasoningFor(projectId, gaps.slice(0, options.reasoningGaps), deps),
  }));
  const [previous, project, overview, { gaps, skipped, reasoning }] = await Promise.all([
    deps.store.getSnapshot(projectId),
    projectOrId(projectId, event, deps),
    deps.readApi.getVisibility(projectId),
    gapsAndReasoning,
  ]);
  return { previous, project, overview, gaps, skipped, reasoning };
}

async function postDigest(event: WebhookEvent, run: RunCompletedData, claim: Claimed, deps: DigestDeps): Promise<RecordResult> {
  const projectId = run.project_id;
  const options = deps.options;
  const targets = await channelsFor(projectId, options.mode, deps);
  if (targets.length === 0) return finishUnrouted(event, claim, deps);
  await deferIfPacedOut(
    targets.map((t) => t.channel),
    deps,
  );
  const { previous, project, overview, gaps, skipped, reasoning } = await readDigestInputs(event, projectId, options, deps);
  const input = {
    project,
    run: { eventId: event.id, runId: run.run_id, answers: run.answers, createdAt: event.created_at, status: run.status },
    overview,
    gaps,
    pageSize: options.gapsPageSize,
    unreadableGaps: skipped,
    previous,
    reasoning,
  };
  // The trend is drawn by Slack in the main message; the PNG (rendered only if Slack refuses the
  // native chart, and only with the fallback on) goes into the thread instead.
  const trend = nextTrend(previous, event.created_at, overview.engines);
  const pngFallback = deps.charts && trend.length >= 2 ? threadChart(trendChartInput(project.name, trend), deps.charts, deps) : undefined;
  const renderOptions = {
    topGaps: options.topGaps,
    reasoningGaps: options.reasoningGaps,
    dashboardUrlTemplate: options.dashboardUrlTemplate,
    noiseMinimums: options.noiseMinimums,
    trend,
  };
  const codec = await actionValueCodec(deps);
  // "About these figures" once per channel: the channels shown it are kept in the snapshot.
  const aboutIn = new Set<string>();
  // The run's model is built once; a filtered channel's once more (./channel-views.ts).
  const views = runViews({ ...input, options: renderOptions }, (target) => ({
    mode: target.mode,
    aboutShown: previous?.aboutPosted?.includes(target.channel) === true,
    channel: channelContext(target, project, codec),
  }));
  const messageFor = (target: ChannelTarget) => {
    const rendered = renderModel(views.modelFor(target));
    if (rendered.about) aboutIn.add(target.channel);
    return rendered;
  };
  const metadata = { event_type: 'visibility_digest', event_payload: { event_id: event.id, project_id: projectId, run_id: run.run_id } };
  const withChart = (target: ChannelTarget) => {
    const message = messageFor(target);
    return { ...message, chart: message.main.fallbackBlocks === undefined ? undefined : pngFallback };
  };
  // A channel's filter may leave nothing of the run; its quiet hours hold it for the catch-up.
  const link = fillUrlTemplate(options.dashboardUrlTemplate, { project_id: projectId, run_id: run.run_id });
  const open = await gateChannels({ event, projectId, views, link }, targets, deps);
  const posted = await postToChannels(event, claim, open, withChart, metadata, deps);
  // Once per event, after every channel: if it fails, the claim is still open and the retry (posting
  // nothing, every channel is done) stores it; marking the event posted first could leave deltas stale.
  const snapshotRun = {
    projectId,
    runId: run.run_id,
    createdAt: event.created_at,
    pageSize: options.gapsPageSize,
    rawGapCount: gaps.length + skipped,
    answers: run.answers,
  };
  // The verdict's state is the project's (the unfiltered run's model), whatever each channel's filter showed.
  const snapshot = buildSnapshot(snapshotRun, overview, gaps, previous, verdictOutcome(views.run));
  const aboutPosted = [...new Set([...(previous?.aboutPosted ?? []), ...[...aboutIn].filter((c) => posted.has(c))])];
  await deps.store.putSnapshot({
    ...snapshot,
    digestThreads: { ...previous?.digestThreads, ...Object.fromEntries(posted) },
    aboutPosted,
    trend,
  });
  await deps.store.finish(event.id, claim.token, 'posted');
  deps.log.info('digest posted', { eventId: event.id, projectId, runId: run.run_id, channels: [...posted.keys()] });
  deps.metrics.count(DIGEST_METRICS.digestPosted);
  return 'posted';
}

/** The channel-specific part of a digest: its buttons and who last changed the channel's settings. */
function channelContext(target: ChannelTarget, project: Project, codec: ActionValueCodec | undefined) {
  const button = { projectId: project.id, projectName: project.name, channel: target.channel };
  return {
    ...button,
    mode: target.mode,
    change: settingsChange(target.subscription),
    actionValue: codec?.encode(button),
  };
}

/** The button signer; undefined (a digest without Mute / Only changes) when none is wired or the key can't be read: the digest matters more. */
async function actionValueCodec(deps: DigestDeps): Promise<ActionValueCodec | undefined> {
  if (deps.actionValues === undefined) return undefined;
  try {
    return await deps.actionValues();
  } catch (error) {
    deps.log.warn('action-signing key unusable: the digest goes without its Mute / Only changes buttons', describeError(error));
    return undefined;
  }
}

/** Who changed the channel's settings and when; none for a plain subscription or a configured channel. */
function settingsChange(subscription: Subscription | undefined) {
  if (!subscription || subscription.lastChange === '' || subscription.lastChange === 'subscribed') return undefined;
  return { what: subscription.lastChange, by: subscription.changedBy, atMs: subscription.changedAtMs };
}

/** The reasoning cards of the top gaps, concurrently. A card that can't be read is shown as missing. */
async function reasoningFor(projectId: string, gaps: readonly Gap[], deps: DigestDeps): Promise<Map<string, ReasoningCard | null>> {
  const cards = await Promise.all(
    gaps.map(async (gap) => {
      try {
        return [gap.prompt_id, await findReasoningCard(deps.readApi, projectId, gap)] as const;
      } catch (error) {
        // A rate limit retries the whole digest; any other failure only loses this card.
        if (error instanceof RateLimited) throw error;
        deps.log.warn('reasoning card unavailable', { projectId, promptId: gap.prompt_id, ...describeError(error) });
        return [gap.prompt_id, null] as const;
      }
    }),
  );
  return new Map(cards);
}

/**
 * The digest worker's domain: a batch of queued events in, one outcome per message out.
 *
 * Exactly-once posting, as far as Slack allows: each event is claimed in DynamoDB by its event id
 * (not the SQS message id, which changes on replay), and each channel it fans out to by event and
 * channel (./fan-out); the top-level ts and the number of thread replies are recorded after each
 * post, so a retry continues where the failed attempt stopped, in the channels not yet done.
 * The only window left is a crash between Slack accepting a post and the progress write.
 * Deferred `/visibility` commands (their own queue, the same function) are answered via response_url.
 * Each handled event type has its handler in EVENT_HANDLERS.
 */
import { DIGEST_METRICS, SLACK_APP_METRICS } from '../contracts';
import {
  HANDLED_EVENT_TYPES,
  type DraftReadyData,
  type EventDataByType,
  type HandledEventType,
  type RunCompletedData,
  type TypedEvent,
  type WebhookEvent,
} from '../events';
import { ChannelPaceDeferred, NeedsOperatorFix, RateLimited, Unavailable } from '../errors';
import { describeError } from '../observability';
import type {
  ChannelPacer,
  Clock,
  DeadLetters,
  DigestClaim,
  DigestStore,
  Log,
  Metrics,
  ReadApi,
  SlackPoster,
  Subscription,
  SubscriptionStore,
} from '../ports';
import { parseQueuedMessage } from '../queued-message';
import type { Gap, Project, ReasoningCard } from '../read-api-types';
import type { DigestMode } from '../contracts';
import { renderDigest, renderDraftReady, verdictOutcome } from './render';
import { buildSnapshot } from './snapshot';
import { ClaimBusyError, classifyFailure, retryNote } from './failures';
import { channelsFor, failureText, postToChannels, type ChannelTarget } from './fan-out';
import type { DeferredDeps, DeferredSlackCommand, Responder, SlackAppWorkerDeps } from '../slack-app/ports';
import { shareValuesFrom } from '../slack-app/interactions';
import { runDeferredCommand } from '../slack-app/service';
import type { ActionValueCodec } from '../slack-app/button-value';
import { findReasoningCard } from './reasoning-card';
import { filterOf, gateChannels, inputFor } from './channel-gate';
import { fillUrlTemplate } from './links';
import { catchUpSweep } from './held-digests';
import type { QuietHoursStore } from '../ports';
import { runWeeklySweep } from '../weekly/sweep';
import type { WeeklyChartHook, WeeklyOptions, WeeklyStore, WeeklySweepMessage } from '../weekly/ports';
import { threadChart, type ChartDeps } from './chart-step';
import { PacedChannel } from '../pacing';
import { nextTrend, trendChartInput, trendOf } from './chart-history';
import type { NoiseMinimums } from './noise';

export interface ChannelRouting {
  defaultChannel: string;
  byProject: Readonly<Record<string, string>>;
}

export interface DigestOptions {
  topGaps: number;
  reasoningGaps: number;
  /** page_size the gaps are read with: a list that fills it is truncated, not complete. */
  gapsPageSize: number | undefined;
  /** Dashboard URL template (validated at cold start): links on the project, gaps and drafts. */
  dashboardUrlTemplate: string | undefined;
  /** 'changes': a run with nothing new or moved posts one compact line and no thread. */
  mode: DigestMode;
  /** Time one record may need: with less left before the deadline it is handed back, not started. */
  recordBudgetMs: number;
  /** The queue's maxReceiveCount, when known: a failure on the last receive says the message moves to the DLQ. */
  maxReceiveCount: number | undefined;
  /** Per-label minimum changes of metrics that are not shares (the stage's `noiseMinimums`); none = the defaults. */
  noiseMinimums: NoiseMinimums | undefined;
}

export interface DigestDeps {
  readApi: ReadApi;
  slack: SlackPoster;
  store: DigestStore;
  /** Where an unusable message goes, with its reason, instead of being deleted. */
  deadLetters: DeadLetters;
  channels: ChannelRouting;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  options?: Partial<DigestOptions>;
  /** The invocation's deadline (epoch ms); none means unbounded (tests, local tools). */
  deadline?: (() => number) | undefined;
  /** Channels subscribed to projects (routing) and the store deferred commands change; none = configuration only. */
  subscriptions?: SubscriptionStore | undefined;
  /** Slack's per-channel pace; none = posts go out unpaced (tests, local tools). */
  pacer?: ChannelPacer | undefined;
  /** Answers deferred slash commands (response_url); required only when such commands arrive. */
  responder?: Responder | undefined;
  /** Waits for a pace slot; a test passes one that advances its fixed clock. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Signs the values of the digest's buttons (the stage's action-signing key); none or unreadable = no Mute / Only changes buttons. */
  actionValues?: (() => Promise<ActionValueCodec>) | undefined;
  /** The `slackAccess` policy and the workspace look-ups deferred commands need; required only when such commands arrive. */
  slackApp?: SlackAppWorkerDeps | undefined;
  /** Weekly reports (shared/weekly): their store and the stage's defaults; none = a weekly sweep message is acknowledged and does nothing. */
  weekly?: { store: WeeklyStore; options: WeeklyOptions; chart?: WeeklyChartHook | undefined } | undefined;
  /** Quiet hours: digests held in a channel's window and their catch-ups (./held-digests); none = never held. */
  quietHours?: QuietHoursStore | undefined;
  /** Trend charts in the digest's thread (./chart-step); none = charts off. */
  charts?: ChartDeps | undefined;
}

export interface QueueRecord {
  messageId: string;
  body: string;
  /** How many times SQS has handed this message out, this time included (ApproximateReceiveCount). */
  receiveCount?: number | undefined;
}

export type RecordResult = 'posted' | 'duplicate' | 'superseded' | 'quarantined' | 'ignored' | 'muted' | 'answered' | 'expired' | 'swept';

export type RecordOutcome =
  { messageId: string; ok: true; result: RecordResult } | { messageId: string; ok: false; retryAfterSeconds: number | undefined };

const DEFAULTS: DigestOptions = {
  topGaps: 5,
  reasoningGaps: 3,
  gapsPageSize: undefined,
  dashboardUrlTemplate: undefined,
  mode: 'full',
  recordBudgetMs: 0,
  maxReceiveCount: undefined,
  noiseMinimums: undefined,
};
/** Different projects of one batch are digested side by side, a few at a time (read-API rate limit). */
const PROJECT_CONCURRENCY = 3;

type Outcomes = Map<string, RecordOutcome>;
type Claimed = Extract<DigestClaim, { status: 'claimed' }>;
/** One record of a handled event type, its data parsed. */
type EventItem<T extends HandledEventType> = { record: QueueRecord; event: WebhookEvent; data: EventDataByType[T] };
type CommandItem = { record: QueueRecord; work: DeferredSlackCommand };
/** What a record is, for log lines. */
type Labelled = { record: QueueRecord; event: { id: string; type: string } };
type UnusableItem = { record: QueueRecord; reason: string; eventId: string | undefined; type: string | undefined };

type EventItems = { [T in HandledEventType]: EventItem<T>[] };
type Job = () => Promise<void>;

/** A batch sorted by what each message is. */
interface SortedBatch {
  events: EventItems;
  commands: CommandItem[];
  weekly: { record: QueueRecord; request: WeeklySweepMessage }[];
  catchUps: QueueRecord[];
  unusable: UnusableItem[];
  ignored: QueueRecord[];
}

/**
 * The digest's handler of each event type: the batch's records of that type in, the jobs that
 * settle them out. A mapped type, so a type added to the event registry (shared/events.ts) fails
 * `tsc` here until it has its handler.
 */
const EVENT_HANDLERS: { readonly [T in HandledEventType]: (items: EventItem<T>[], deps: DigestDeps, outcomes: Outcomes) => Job[] } = {
  // Several runs of one project in one batch make one digest: a job per project.
  'run.completed': (items, deps, outcomes) =>
    [...groupByProject(items).values()].map((group) => () => digestProjectRuns(group, deps, outcomes)),
  'draft.ready': (items, deps, outcomes) =>
    items.map((item) => () => settle(item, () => noticeDraft(item.event, item.data, deps), deps, outcomes)),
};

export async function processBatch(records: readonly QueueRecord[], deps: DigestDeps): Promise<RecordOutcome[]> {
  const outcomes: Outcomes = new Map();
  const batch = sortBatch(records, deps);
  for (const record of batch.ignored) outcomes.set(record.messageId, { messageId: record.messageId, ok: true, result: 'ignored' });
  const jobs: Job[] = [];
  for (const item of batch.unusable) jobs.push(() => quarantine(item, deps, outcomes));
  for (const type of HANDLED_EVENT_TYPES) jobs.push(...eventJobs(type, batch.events, deps, outcomes));
  for (const item of batch.commands) jobs.push(() => settle(commandLabel(item), () => answerCommand(item.work, deps), deps, outcomes));
  for (const item of batch.weekly)
    jobs.push(() =>
      settle({ record: item.record, event: { id: 'weekly', type: 'weekly_sweep' } }, () => sweepWeekly(item.request, deps), deps, outcomes),
    );
  for (const record of batch.catchUps)
    jobs.push(() => settle({ record, event: { id: 'quiet-hours', type: 'quiet_catch_up' } }, () => catchUpSweep(deps), deps, outcomes));
  await runLimited(jobs, PROJECT_CONCURRENCY);
  return records.map(
    (record) => outcomes.get(record.messageId) ?? { messageId: record.messageId, ok: false, retryAfterSeconds: undefined },
  );
}

function eventJobs<T extends HandledEventType>(type: T, events: EventItems, deps: DigestDeps, outcomes: Outcomes): Job[] {
  const handler = EVENT_HANDLERS[type] as (items: EventItem<T>[], deps: DigestDeps, outcomes: Outcomes) => Job[];
  const items = events[type];
  return items.length === 0 ? [] : handler(items, deps, outcomes);
}

function groupByProject(items: readonly EventItem<'run.completed'>[]): Map<string, EventItem<'run.completed'>[]> {
  const groups = new Map<string, EventItem<'run.completed'>[]>();
  for (const item of items) groups.set(item.data.project_id, [...(groups.get(item.data.project_id) ?? []), item]);
  return groups;
}

function emptyEventItems(): EventItems {
  return Object.fromEntries(HANDLED_EVENT_TYPES.map((type) => [type, []])) as unknown as EventItems;
}

function addEvent(events: EventItems, record: QueueRecord, typed: TypedEvent): void {
  // The items of typed.type get typed.data: the same T on both sides, which TypeScript cannot correlate.
  events[typed.type].push({ record, event: typed.event, data: typed.data } as never);
}

/** Parses each message once, into events by type, deferred commands, and the unusable. */
function sortBatch(records: readonly QueueRecord[], deps: DigestDeps): SortedBatch {
  const batch: SortedBatch = { events: emptyEventItems(), commands: [], weekly: [], catchUps: [], unusable: [], ignored: [] };
  for (const record of records) {
    const message = parseQueuedMessage(record.body);
    if (message.kind === 'unusable') {
      batch.unusable.push({ record, reason: message.reason, eventId: message.hints.eventId, type: message.hints.type });
      continue;
    }
    if (message.kind === 'ignored') {
      deps.log.info('replayed delivery ignored', { messageId: record.messageId, reason: message.reason });
      batch.ignored.push(record);
      continue;
    }
    if (message.kind === 'slack_command') {
      batch.commands.push({ record, work: message.command });
      continue;
    }
    if (message.kind === 'weekly_sweep') {
      batch.weekly.push({ record, request: message.sweep });
      continue;
    }
    if (message.kind === 'quiet_catch_up') {
      batch.catchUps.push(record);
      continue;
    }
    deps.log.debug('message parsed', { messageId: record.messageId, eventId: message.typed.event.id });
    addEvent(batch.events, record, message.typed);
  }
  return batch;
}

/**
 * A message this version can never process goes to the DLQ with its reason (never deleted), so a
 * later version can take it with `bridge dlq replay`. If the DLQ can't be reached, the message is
 * handed back and reaches the DLQ by the queue's own redrive.
 */
async function quarantine(item: UnusableItem, deps: DigestDeps, outcomes: Outcomes): Promise<void> {
  const { messageId } = item.record;
  const fields = { messageId, eventId: item.eventId, type: item.type, reason: item.reason };
  try {
    const attributes = {
      source: 'digest',
      quarantined_at: new Date(deps.clock.now()).toISOString(),
      event_id: item.eventId ?? '',
      type: item.type ?? '',
    };
    await deps.deadLetters.quarantine(item.record.body, item.reason, attributes);
    deps.log.error('message quarantined in the DLQ: this version cannot process it', fields);
    deps.metrics.count(DIGEST_METRICS.messageQuarantined);
    outcomes.set(messageId, { messageId, ok: true, result: 'quarantined' });
  } catch (error) {
    deps.log.error('could not quarantine an unusable message; it is handed back', { ...fields, ...describeError(error) });
    outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: undefined });
  }
}

/**
 * Several runs of one project in one batch: the newest goes first and takes the newest-run mark, so
 * the others are superseded by digestRun itself, except one whose top-level message an earlier
 * attempt already posted: that one still finishes its thread.
 */
async function digestProjectRuns(group: readonly EventItem<'run.completed'>[], deps: DigestDeps, outcomes: Outcomes): Promise<void> {
  const newestFirst = [...group].sort((a, b) => Date.parse(b.event.created_at) - Date.parse(a.event.created_at));
  for (const item of newestFirst) await settle(item, () => digestRun(item.event, item.data, deps), deps, outcomes);
}

async function settle(item: Labelled, work: () => Promise<RecordResult>, deps: DigestDeps, outcomes: Outcomes): Promise<void> {
  const { messageId } = item.record;
  if (!timeLeftFor(deps)) {
    // Started now, it could be cut off half-posted; the retry starts it with a whole budget.
    deps.log.warn('record handed back: not enough time left in this invocation', { messageId, eventId: item.event.id });
    outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: undefined });
    return;
  }
  try {
    outcomes.set(messageId, { messageId, ok: true, result: await work() });
  } catch (error) {
    if (error instanceof ChannelPaceDeferred) {
      deps.log.info("record handed back to keep its channel's pace", {
        messageId,
        eventId: item.event.id,
        channel: error.channel,
        retryAfterMs: error.retryAfterMs,
      });
      outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: error.retryAfterSeconds });
      return;
    }
    const verdict = classifyFailure(error);
    const fields = {
      messageId,
      eventId: item.event.id,
      type: item.event.type,
      errorName: verdict.errorName,
      errorMessage: verdict.errorMessage,
      retryAfterSeconds: verdict.retryAfterSeconds,
    };
    if (verdict.needsFix)
      deps.log.error(`digest failed and needs a fix: ${verdict.fix ?? verdict.errorMessage}`, { ...fields, fix: verdict.fix });
    else
      deps.log.warn(retryNote(item.record.receiveCount, { ...DEFAULTS, ...deps.options }.maxReceiveCount), { ...fields, fix: verdict.fix });
    deps.metrics.count(DIGEST_METRICS.digestFailed);
    outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: verdict.retryAfterSeconds });
  }
}

function timeLeftFor(deps: DigestDeps): boolean {
  const deadline = deps.deadline?.();
  if (deadline === undefined) return true;
  const { recordBudgetMs } = { ...DEFAULTS, ...deps.options };
  return deadline - deps.clock.now() >= recordBudgetMs;
}

async function runLimited(jobs: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++];
      if (job) await job();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}

/** Claims the event for posting; undefined when it needs no work (already posted or skipped). */
async function claimFor(event: WebhookEvent, deps: DigestDeps): Promise<Claimed | undefined> {
  const claim = await deps.store.claim(event.id, deps.clock.now());
  if (claim.status === 'busy') throw new ClaimBusyError(claim.retryAfterSeconds);
  if (claim.status === 'done') {
    deps.log.info('event already handled; nothing posted', { eventId: event.id, outcome: claim.outcome });
    deps.metrics.count(DIGEST_METRICS.eventDuplicate);
    return undefined;
  }
  return claim;
}

/** Runs `work` under the claim; on failure the lease ends early so the retry needn't wait for it. */
async function underClaim<T>(event: WebhookEvent, token: string, deps: DigestDeps, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    try {
      await deps.store.release(event.id, token, failureText(error));
    } catch (releaseError) {
      deps.log.warn('could not release the posting claim; it expires with its lease', {
        eventId: event.id,
        ...describeError(releaseError),
      });
    }
    throw error;
  }
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
  const options = { ...DEFAULTS, ...deps.options };
  const targets = await channelsFor(projectId, options.mode, deps);
  if (targets.length === 0) return finishUnrouted(event, claim, deps);
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
  const renderOptions = {
    topGaps: options.topGaps,
    reasoningGaps: options.reasoningGaps,
    dashboardUrlTemplate: options.dashboardUrlTemplate,
    noiseMinimums: options.noiseMinimums,
  };
  // One chart per run, in every thread but a compact line's.
  const trend = nextTrend(previous, event.created_at, overview.engines);
  // Fewer than two runs draw no trend: the renderer is not even loaded.
  const chart = deps.charts && trend.length >= 2 ? threadChart(trendChartInput(project.name, trend), deps.charts, deps) : undefined;
  const codec = await actionValueCodec(deps);
  // "About these figures" once per channel: the channels shown it are kept in the snapshot.
  const aboutIn = new Set<string>();
  const messageFor = (target: ChannelTarget) => {
    const aboutShown = previous?.aboutPosted?.includes(target.channel) === true;
    const rendered = renderDigest({
      ...inputFor(input, target),
      options: {
        ...renderOptions,
        mode: target.mode,
        aboutShown,
        channel: channelContext(target, project, codec),
        minChange: filterOf(target)?.minChange,
        chartInThread: chart !== undefined,
      },
    });
    if (rendered.about) aboutIn.add(target.channel);
    return rendered;
  };
  const metadata = { event_type: 'visibility_digest', event_payload: { event_id: event.id, project_id: projectId, run_id: run.run_id } };
  const withChart = (target: ChannelTarget) => {
    const message = messageFor(target);
    return { ...message, chart: message.quiet ? undefined : chart };
  };
  // A channel's filter may leave nothing of the run; its quiet hours hold it for the catch-up.
  const link = fillUrlTemplate(options.dashboardUrlTemplate, { project_id: projectId, run_id: run.run_id });
  const open = await gateChannels({ event, projectId, input, messageFor, link }, targets, deps);
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
  // The verdict's state is the project's (unfiltered input), whatever each channel's filter showed.
  const snapshot = buildSnapshot(snapshotRun, overview, gaps, previous, verdictOutcome({ ...input, options: renderOptions }));
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

/** Every channel of the project muted it or refuses posts (and there is no home channel, or it muted it too): nothing to post or read. */
async function finishUnrouted(event: WebhookEvent, claim: Claimed, deps: DigestDeps): Promise<RecordResult> {
  await deps.store.finish(event.id, claim.token, 'skipped');
  deps.log.info('digest posted nowhere: every channel of the project muted it or refuses posts', { eventId: event.id });
  // A handled run for the UndeliveredDigests alarm (drafts are not counted as accepted runs).
  if (event.type === 'run.completed') deps.metrics.count(DIGEST_METRICS.runMuted);
  return 'muted';
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

function projectNamed(projects: readonly Project[], projectId: string): Project {
  return projects.find((p) => p.id === projectId) ?? { id: projectId, name: projectId, industry: null };
}

/** The project with its name, or with its id as the name when /v1/projects fails (a rate limit retries). */
async function projectOrId(projectId: string, event: WebhookEvent, deps: DigestDeps): Promise<Project> {
  try {
    return projectNamed(await deps.readApi.listProjects(), projectId);
  } catch (error) {
    if (error instanceof RateLimited) throw error;
    deps.log.warn('project name unavailable; the message shows the project id', { eventId: event.id, ...describeError(error) });
    return { id: projectId, name: projectId, industry: null };
  }
}

async function noticeDraft(event: WebhookEvent, draft: DraftReadyData, deps: DigestDeps): Promise<RecordResult> {
  const claim = await claimFor(event, deps);
  if (!claim) return 'duplicate';
  return underClaim<RecordResult>(event, claim.token, deps, async () => {
    const { dashboardUrlTemplate, mode } = { ...DEFAULTS, ...deps.options };
    const targets = await channelsFor(draft.project_id, mode, deps);
    if (targets.length === 0) return finishUnrouted(event, claim, deps);
    const [project, snapshot] = await Promise.all([projectOrId(draft.project_id, event, deps), deps.store.getSnapshot(draft.project_id)]);
    const message = renderDraftReady({
      project,
      projectId: draft.project_id,
      assetId: draft.asset_id,
      version: draft.version,
      createdAt: event.created_at,
      dashboardUrlTemplate,
    });
    const metadata = {
      event_type: 'visibility_draft_ready',
      event_payload: { event_id: event.id, project_id: draft.project_id, asset_id: draft.asset_id },
    };
    // Into the thread of the project's latest digest in each channel, when there is one.
    const messageFor = (target: ChannelTarget) => ({ main: message, thread: [], threadTs: snapshot?.digestThreads?.[target.channel] });
    await postToChannels(event, claim, targets, messageFor, metadata, deps);
    await deps.store.finish(event.id, claim.token, 'posted');
    deps.log.info('draft notice posted', {
      eventId: event.id,
      projectId: draft.project_id,
      assetId: draft.asset_id,
      channels: targets.map((t) => t.channel),
    });
    deps.metrics.count(DIGEST_METRICS.draftNoticePosted);
    return 'posted';
  });
}

/** Slack accepts answers on a response_url for 30 minutes; past that a retry cannot deliver. */
const RESPONSE_URL_LIFETIME_MS = 30 * 60_000;

function commandLabel(item: CommandItem): Labelled {
  return { record: item.record, event: { id: `${item.work.command.kind}@${item.work.context.channel}`, type: 'slack_command' } };
}

/** A deferred `/visibility` command: answered via its response_url; retried while that URL still works. */
async function answerCommand(work: DeferredSlackCommand, deps: DigestDeps): Promise<RecordResult> {
  try {
    await runDeferredCommand(work, commandDeps(deps));
  } catch (error) {
    deps.metrics.count(SLACK_APP_METRICS.slackResponseFailed);
    if (deps.clock.now() - work.receivedAtMs < RESPONSE_URL_LIFETIME_MS)
      throw new Unavailable('Slack did not take the answer at response_url', { cause: error });
    deps.log.error('slash command left unanswered: its response_url expired', {
      command: work.command.kind,
      channel: work.context.channel,
      ...describeError(error),
    });
    return 'expired';
  }
  deps.metrics.count(SLACK_APP_METRICS.slackCommandAnswered);
  return 'answered';
}

function commandDeps(deps: DigestDeps): DeferredDeps {
  if (!deps.subscriptions || !deps.responder || !deps.slackApp)
    throw new NeedsOperatorFix(
      'a slash command reached a digest worker without the subscription store or the Slack app wiring',
      'deploy the digest function with the Slack app wiring (TABLE_NAME, response_url origins, SLACK_ACCESS_POLICY)',
    );
  return {
    ...deps.slackApp,
    store: deps.subscriptions,
    clock: deps.clock,
    directory: deps.readApi,
    status: deps.readApi,
    responder: deps.responder,
    shares: shareValuesFrom(deps.actionValues),
    // `status` renders like the digest: same links, page size and noise minimums.
    statusOptions: {
      dashboardUrlTemplate: deps.options?.dashboardUrlTemplate,
      gapsPageSize: deps.options?.gapsPageSize,
      noiseMinimums: deps.options?.noiseMinimums,
    },
    metrics: deps.metrics,
    log: deps.log,
  };
}

/** A weekly sweep: every due channel's report (shared/weekly/sweep.ts); a channel's failure is its own, the sweep succeeds. */
/** Each project's trend chart in its weekly report's thread, from its stored trend; none when charts are off. */
function weeklyCharts(deps: DigestDeps): WeeklyChartHook | undefined {
  const charts = deps.charts;
  if (charts === undefined) return undefined;
  return async ({ channel, ts, projects }) => {
    const paced = new PacedChannel(channel, deps);
    for (const project of projects) {
      const snapshot = await deps.store.getSnapshot(project.id);
      if (snapshot === null) continue;
      const chart = threadChart(trendChartInput(project.name, trendOf(snapshot)), charts, deps);
      await chart.postInThread({ channel, threadTs: ts, paced, slack: deps.slack, eventId: `weekly#${channel}#${project.id}` });
    }
  };
}

async function sweepWeekly(request: WeeklySweepMessage, deps: DigestDeps): Promise<RecordResult> {
  if (deps.weekly === undefined || deps.subscriptions === undefined) {
    deps.log.warn('weekly sweep ignored: weekly reports are not set up in this runtime');
    return 'ignored';
  }
  const { kind: _kind, ...sweep } = request;
  await runWeeklySweep(sweep, {
    ...deps.weekly,
    chart: deps.weekly.chart ?? weeklyCharts(deps),
    digests: deps.store,
    subscriptions: deps.subscriptions,
    listProjects: () => deps.readApi.listProjects(),
    slack: deps.slack,
    pacer: deps.pacer,
    clock: deps.clock,
    log: deps.log,
    metrics: deps.metrics,
    deadline: deps.deadline,
    sleep: deps.sleep,
  });
  return 'swept';
}

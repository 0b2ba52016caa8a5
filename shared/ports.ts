/**
 * Ports: everything the domain needs from the outside world, in one place. Adapters in
 * shared/adapters implement them (DynamoDB, SQS, the read API over fetch, Slack, Secrets Manager,
 * Powertools); tests and the local stack pass the same adapters pointed at local peers. Failures
 * cross these ports as the vocabulary of ./errors.
 *
 * A leaf: the data that crosses a port is declared here (or in the leaf modules contracts and
 * read-api-types), never imported from domain logic, so no import cycle can run through a port.
 */
import type { DigestMode, MetricName, QUEUE_MESSAGE_KINDS } from './contracts';
import type { Gap, Project, Probe, ReasoningCard, Scalar, VisibilityOverview } from './read-api-types';

// --- Clock -------------------------------------------------------------------------------------

/** Wall clock in epoch milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

// --- Log and metrics ---------------------------------------------------------------------------

export type LogFields = Record<string, unknown>;

export interface Log {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface Metrics {
  /** Adds 1 (or `value`) to a count metric; each entry of `dimensions` adds a breakdown of its own (the rejection reason, the tenant). */
  count(name: MetricName, value?: number, dimensions?: Record<string, string>): void;
}

// --- Messages that cross the queue -------------------------------------------------------------

/** A delivery body that passed structural validation (shared/events.ts). `data` is kept as sent. */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** What ingest sends to SQS: the verified event plus when the bridge received it. */
export interface QueuedEvent {
  event: WebhookEvent;
  received_at: string;
  /** The connection whose webhook received it (`/webhook/<id>`); absent for the stack's own `/webhook`. */
  connection?: string | undefined;
}

/** The DLQ message body of a quarantined delivery (JSON; shared/quarantine.ts). */
export interface QuarantinedDelivery {
  kind: typeof QUEUE_MESSAGE_KINDS.quarantinedDelivery;
  /** The body exactly as received (base64 of the bytes the signature covered, a BOM included). */
  raw_base64: string;
  /** Why ingest could not process it (a fixed text, never body content). */
  reason: string;
  /** When ingest received it (ISO 8601 UTC). */
  received_at: string;
  /** The `t` of the verified signature (unix seconds): re-admission checks `created_at` against it. */
  signed_at: number;
  /** The body's id, when it is one that can be stored (printable ASCII, bounded). */
  event_id?: string | undefined;
  /** The connection whose webhook received it; absent for the stack's own `/webhook`. */
  connection?: string | undefined;
}

// --- Ingest: delivery store and queue ----------------------------------------------------------

export type DeliveryClaim =
  { status: 'claimed'; token: string } | { status: 'completed' } | { status: 'in_progress'; retryAfterSeconds: number };

/** De-duplication records for webhook deliveries, keyed by the signed event id. */
export interface DeliveryStore {
  /** Claims the delivery for this invocation, or says why it can't be claimed. */
  claim(eventId: string, nowMs: number): Promise<DeliveryClaim>;
  /** Marks the delivery enqueued. Only the holder of `token` can complete it. */
  complete(eventId: string, token: string, nowMs: number): Promise<void>;
  /** Gives the claim back so that the sender's retry can enqueue it. */
  release(eventId: string, token: string): Promise<void>;
}

/** The queue between ingest and digest, and the dead-letter queue that keeps what ingest can't process. */
export interface EventQueue {
  send(message: QueuedEvent): Promise<void>;
  /** Keeps a signed delivery ingest could not process in the DLQ, with its reason as an attribute. */
  quarantine(delivery: QuarantinedDelivery): Promise<void>;
}

// --- Secrets -----------------------------------------------------------------------------------

/** How long a caller can wait for a secret (the Slack function must answer within Slack's 3 s). */
export interface SecretReadOptions {
  /** Give up after this long with `SecretReadTimedOut` (the read may still land in the source's cache). */
  timeoutMs?: number | undefined;
}

export interface SecretSource {
  /** Current value; cached by the implementation. Throws SecretNotSet when empty or the placeholder. */
  get(options?: SecretReadOptions): Promise<string>;
  /** Where the value comes from, for messages (an ARN or "environment"); never the value. */
  readonly description: string;
}

// --- Digest: read API --------------------------------------------------------------------------

/** Gaps with the count of entries that were skipped because they lacked prompt_id or prompt_text. */
export interface GapsResult {
  gaps: Gap[];
  skipped: number;
}

/** What the digest needs from the service's read API. A wait it cannot afford throws RateLimited. */
export interface ReadApi {
  listProjects(): Promise<Project[]>;
  getVisibility(projectId: string): Promise<VisibilityOverview>;
  getGaps(projectId: string): Promise<Gap[]>;
  getGapsWithSkipped(projectId: string): Promise<GapsResult>;
  getResults(projectId: string, promptId: string): Promise<Probe[]>;
  getReasoning(projectId: string, resultId: string): Promise<ReasoningCard>;
}

// --- Digest: Slack -----------------------------------------------------------------------------

export interface SlackMessage {
  /** Notification / accessibility fallback. Replaced by a summary of the blocks when blank. */
  text: string;
  /** Block Kit blocks. */
  blocks: unknown[];
  /**
   * The message without its native chart and table blocks (their words instead), sent once when Slack
   * answers `invalid_blocks` to `blocks` (a client or workspace without them yet); none = no such blocks.
   */
  fallbackBlocks?: unknown[] | undefined;
}

export interface SlackMessageMetadata {
  event_type: string;
  event_payload: Record<string, string | number | boolean>;
}

export interface SlackPostOptions {
  /** Post as a reply in this thread. */
  threadTs?: string | undefined;
  metadata?: SlackMessageMetadata | undefined;
  /** false: a 429 is thrown at once (Unavailable with retryAfterSeconds) for the caller's pacer to place the retry. */
  retryRateLimited?: boolean | undefined;
}

export interface SlackPostResult {
  ts: string;
  channel: string;
  /** Slack refused the native blocks: `fallbackBlocks` were posted instead. */
  nativeRefused?: boolean | undefined;
}

/** Throws Unavailable (retry; `outcomeUnknown` = look first) or NeedsOperatorFix. */
export interface SlackPoster {
  post(channel: string, message: SlackMessage, options?: SlackPostOptions): Promise<SlackPostResult>;
  /**
   * The ts of a top-level message posted since `oldestEpochSeconds` whose metadata names `eventId`
   * (conversations.history; needs channels:history). Used before posting again after an attempt
   * whose outcome is unknown.
   */
  findPosted(channel: string, eventId: string, oldestEpochSeconds: number): Promise<string | undefined>;
  /** How many replies in the thread carry `eventId` in their metadata (conversations.replies). */
  countReplies(channel: string, threadTs: string, eventId: string): Promise<number>;
}

/**
 * What the bridge posted for one event in one channel, learned without reading the channel: from each
 * post's answer and from Slack's `message_metadata_posted` event (shared/digest/posted-ledger.ts).
 */
export interface PostedRecord {
  /** ts of the top-level message. */
  mainTs?: string | undefined;
  /** Replies posted in its thread (distinct reply keys of their metadata). */
  replies: number;
  /** When the latest post whose outcome is still unknown was tried (epoch ms): its `message_metadata_posted` event may be on its way. */
  unknownAtMs?: number | undefined;
}

export interface PostedLedger {
  /** A message of the event is in the channel: the top-level one (`reply` undefined) or a reply. */
  recordPosted(channel: string, eventId: string, ts: string, reply: string | undefined): Promise<void>;
  /** A post of the event (top-level or `reply`) ended with its outcome unknown; its ts, once recorded, settles it. */
  recordUnknown(channel: string, eventId: string, reply: string | undefined, atMs: number): Promise<void>;
  find(channel: string, eventId: string): Promise<PostedRecord | undefined>;
}

// --- Digest: store and queue -------------------------------------------------------------------

/** What has been posted for one event so far, so a retry continues instead of posting again. */
export interface PostingProgress {
  channel?: string | undefined;
  /** ts of the top-level message once it is posted. */
  mainTs?: string | undefined;
  /** Thread replies already posted under mainTs. */
  repliesPosted: number;
}

export type DigestClaim =
  | {
      status: 'claimed';
      token: string;
      progress: PostingProgress;
      /** 1 on the first claim of the event; more when an earlier attempt failed or died. */
      attempt: number;
      /** When the event was first claimed (epoch ms): posts of earlier attempts are not older. */
      firstClaimedMs: number;
    }
  /** `mainTs`: the top-level message the finished claim posted, when it posted one. */
  | { status: 'done'; outcome: 'posted' | 'skipped'; mainTs?: string | undefined }
  | { status: 'busy'; retryAfterSeconds: number };

/**
 * Posting claims: one per event (`digest#<event id>`: the record's lease, newest-run and snapshot
 * work) and one per event and channel (`post#<channel>#<event id>`: that channel's posts and
 * progress, so a retry does only the channels not yet done); and per-project snapshots.
 */
export interface DigestStore {
  claim(eventId: string, nowMs: number): Promise<DigestClaim>;
  recordProgress(eventId: string, token: string, progress: PostingProgress): Promise<void>;
  finish(eventId: string, token: string, outcome: 'posted' | 'skipped'): Promise<void>;
  /** Ends the lease early (after a failure) but keeps the progress for the retry. */
  release(eventId: string, token: string, failure?: string): Promise<void>;
  /**
   * Records `createdAtMs` as the newest run of the project taken up for a digest, unless a newer
   * one already was: false means this run is superseded. Checked before any read or post, so two
   * invocations digesting runs of one project side by side cannot both post.
   */
  markNewestRun(projectId: string, createdAtMs: number, eventId: string): Promise<boolean>;
  /** The claim of one channel of the event's fan-out: same lease semantics as `claim`, its own progress. */
  claimChannel(eventId: string, channel: string, nowMs: number): Promise<DigestClaim>;
  recordChannelProgress(eventId: string, channel: string, token: string, progress: PostingProgress): Promise<void>;
  /** The channel has everything it should get of this event. */
  finishChannel(eventId: string, channel: string, token: string): Promise<void>;
  releaseChannel(eventId: string, channel: string, token: string, failure?: string): Promise<void>;
  getSnapshot(projectId: string): Promise<ProjectSnapshot | null>;
  /** Stores the snapshot unless a newer one (by lastCreatedAt) is already there. */
  putSnapshot(snapshot: ProjectSnapshot): Promise<void>;
}

export interface SnapshotGap {
  prompt_id: string;
  prompt_ref: Scalar;
  prompt_text: string;
  /** Engines it was lost on (absent in snapshots written before digest v2). */
  platforms_losing?: string[] | undefined;
  /** Who won it (absent before digest v3): a change of winner is news. */
  top_competitor?: string | undefined;
}

/** One figure's persistence state (shared/digest/verdict/figure.ts): its learned level and spread, and its CUSUMs. */
export interface FigureState {
  /** The figure's usual level (an average of its in-control runs), in its unit. */
  level: number;
  /** Variance of that average. */
  levelVar: number;
  /** One-sided CUSUMs of the standardized residuals, upwards and downwards (≥ 0), and the runs each has been building. */
  up: number;
  down: number;
  upRuns: number;
  downRuns: number;
  /** Runs averaged into `level` since it was last set. */
  runs: number;
  /** Learned spread (one answer's variance for a mean, the dispersion of a count, the variance otherwise), and its runs. */
  scale?: number | undefined;
  scaleRuns?: number | undefined;
}

/** A kind of gap news' usual amount per run (engine losses), learned over the project's runs. */
export interface ChurnState {
  mean: number;
  meanSquare: number;
  runs: number;
}

/** What the verdict learned of a project (shared/digest/verdict): bounded, carried from run to run. */
export interface VerdictState {
  /** By figure key (`m:<label>`, `e:<engine>`), at most `VERDICT_MAX_FIGURES`. */
  figures: Record<string, FigureState>;
  /** By kind of gap news (`taken`, `worse`, `resolved`). */
  churn: Record<string, ChurnState>;
}

/** A run's mark: ⚠️ too thin to judge; ⚪ nothing called; 🔴 / 🟢 only bad / good news; 🟡 both. */
export type RunMark = '🔴' | '🟡' | '🟢' | '⚪' | '⚠️';

/** What the digest said of the project's latest run: its mark and its headline (safe mrkdwn, without the project). */
export interface RunVerdict {
  runId: string;
  mark: RunMark;
  headline: string;
}

/** One past run's numeric headline values. */
export interface SnapshotPoint {
  createdAt: string;
  runId: string;
  metrics: Record<string, number>;
  /** The run's answer count (digest v3; sampling noise). */
  answers?: number | undefined;
  /** Prompts lost to each top rival (digest v3; "vs last week"), at most `SNAPSHOT_HISTORY_RIVALS`. */
  rivals?: Record<string, number> | undefined;
  /** Too few answers to judge (shared/digest/verdict/quality.ts): its figures are not compared nor learned from. */
  lowData?: boolean | undefined;
}

/** The per-project snapshot kept between digests (shared/digest/snapshot.ts builds and compares it). */
export interface ProjectSnapshot {
  projectId: string;
  /** `created_at` of the run.completed event the snapshot was taken from. */
  lastCreatedAt: string;
  lastRunId: string;
  /** Numeric headline values by metric label (see `parseNumericValue`). */
  metrics: Record<string, number>;
  /** Gaps in API order (worst first), de-duplicated by prompt_id. */
  gaps: SnapshotGap[];
  /** True when the gaps list filled the page it was read with: gaps beyond it exist or may exist. */
  gapsTruncated?: boolean | undefined;
  /** The page size the gaps were read with. */
  pageSize?: number | undefined;
  /** The last runs, oldest first, this one included; at most `SNAPSHOT_HISTORY_RUNS`. */
  history?: SnapshotPoint[] | undefined;
  /** Each engine's main figure (see `rowPrimaryValue`) by engine name; at most `SNAPSHOT_MAX_METRICS`. */
  engines?: Record<string, number> | undefined;
  /** Top-level ts of the latest digest by channel: a draft notice is posted into that thread. */
  digestThreads?: Record<string, string> | undefined;
  /** Channels that were shown "About these figures" (digest v3: once per channel). */
  aboutPosted?: string[] | undefined;
  /** Each run's figure per engine over the last 8 weeks, oldest first, for the trend chart (shared/digest/chart-history.ts bounds it). */
  trend?: TrendPoint[] | undefined;
  /** The verdict's learned levels, spreads, CUSUMs and churn (digest v4); absent before. */
  verdict?: VerdictState | undefined;
  /** The digest's mark and headline of `lastRunId` (the unfiltered run's), read back by `/visibility status`. */
  lastVerdict?: RunVerdict | undefined;
}

/** One run's visibility per engine (0–100 or 0–1, as the service sends it), for the trend chart. */
export interface TrendPoint {
  /** The run's created_at, epoch ms. */
  atMs: number;
  /** Engine name → figure; at most `TREND_LIMITS.engines` engines. */
  engines: Record<string, number>;
}

/** A received message as it is sent again: its body, its attributes and its tenant's MessageGroupId. */
export interface RequeuedMessage {
  body: string;
  /** String message attributes (type, event id, project), copied as they came. */
  attributes: Readonly<Record<string, string>>;
  /** The fair queue's tenant; none = a message without a group (a tenant of its own). */
  groupId: string | undefined;
}

/** Changes when a received message becomes visible again. */
export interface MessageVisibility {
  delay(receiptHandle: string, seconds: number): Promise<void>;
  /**
   * Sends the message again, delivered after `delaySeconds`: a new message whose receive count starts
   * over (a hand-back would count towards maxReceiveCount and the DLQ).
   */
  requeue(message: RequeuedMessage, delaySeconds: number): Promise<void>;
}

// --- Dead letters -------------------------------------------------------------------------------

/**
 * Where a message nothing can process is kept, with its reason, instead of being deleted: an operator
 * reads the reason (`bridge dlq peek`) and replays it after an upgrade (`bridge dlq replay`).
 */
export interface DeadLetters {
  quarantine(body: string, reason: string, attributes: Readonly<Record<string, string>>): Promise<void>;
}

// --- Pacing --------------------------------------------------------------------------------------

/** A reservation of a channel's next posting slot. */
export type PaceDecision =
  /** Post after waiting `waitMs` (0: now). The slot is reserved. */
  | { status: 'reserved'; waitMs: number }
  /** The wait would exceed the caller's budget: nothing reserved; hand the work back for `retryAfterMs`. */
  | { status: 'deferred'; retryAfterMs: number };

export interface SlotRequest {
  /** Slack's Retry-After after a 429: the channel's slots move past it, for every worker. */
  notBeforeMs?: number | undefined;
  /** Consecutive slots to reserve (a digest and its thread replies go out together); default 1. */
  slots?: number | undefined;
  /** The longest the first slot may be waited for; a longer wait is deferred (nothing reserved). None = `maxWaitMs` alone. */
  maxFirstWaitMs?: number | undefined;
}

/** Paces posts per channel (Slack allows about one message per second per channel; shared/pacing.ts). */
export interface ChannelPacer {
  /** The time one post occupies in a channel. */
  readonly intervalMs: number;
  /** The channel's next slot(s) (see SlotRequest); the decision's wait is for the first. */
  reserve(channel: string, nowMs: number, maxWaitMs: number, request?: SlotRequest): Promise<PaceDecision>;
  /** The wait for the channel's next slot now, reserving nothing (0: free). */
  peek(channel: string, nowMs: number): Promise<number>;
}

// --- Subscriptions (the Slack app writes them, the digest routes by them) ----------------------

/** Who did something in Slack. */
export interface Actor {
  userId: string;
  userName?: string | undefined;
}

/** One project ↔ channel subscription with its settings and the last change made to it. */
export interface Subscription {
  projectId: string;
  /** The project's name when subscribed: lets `list`, `mute`, … answer without the read API. */
  projectName: string;
  channel: string;
  mode: DigestMode;
  /** Epoch ms until which digests to this channel are skipped; absent when not muted. */
  mutedUntilMs?: number | undefined;
  createdBy: string;
  createdAtMs: number;
  changedBy: string;
  changedAtMs: number;
  /** Human summary of the last change, e.g. "muted for 7d" — shown on digests and in `list`. */
  lastChange: string;
  /** Set when Slack refused a digest here for good (bot not in the channel, archived…): skipped until re-subscribed. */
  broken?: { code: string; atMs: number } | undefined;
  /** What of a run this channel hears (`/visibility filter`, digest/channel-filter.ts); none = everything. */
  filter?: ChannelFilter | undefined;
}

export type SettingsChange = { kind: 'mute'; untilMs: number; label: string } | { kind: 'unmute' } | { kind: 'mode'; mode: DigestMode };

export interface NewSubscription {
  projectId: string;
  projectName: string;
  channel: string;
  actor: Actor;
  nowMs: number;
  mode?: DigestMode | undefined;
  mutedUntilMs?: number | undefined;
  lastChange?: string | undefined;
}

/** One change to a channel's subscriptions, as `list` shows it under "Recent changes". */
export interface AuditEntry {
  /** The Slack user id of who made it. */
  who: string;
  whenMs: number;
  /** What changed, e.g. "subscribed", "muted for 7d", "mode changes", "unsubscribed" (+ " (button)"). */
  what: string;
  projectId: string;
  projectName: string;
}

export type SubscribeResult = { status: 'subscribed'; subscription: Subscription } | { status: 'already'; subscription: Subscription };

/** Many-to-many project ↔ channel subscriptions. Errors of the backing store propagate (the caller retries). */
export interface SubscriptionStore {
  /** Adds the subscription; an existing one keeps its settings (`already`), a broken one is replaced (subscribing again repairs it). */
  subscribe(input: NewSubscription): Promise<SubscribeResult>;
  /** false when the channel was not subscribed to the project. */
  unsubscribe(projectId: string, channel: string): Promise<boolean>;
  /** Applies the change; null when the channel is not subscribed to the project. */
  change(projectId: string, channel: string, change: SettingsChange, actor: Actor, nowMs: number): Promise<Subscription | null>;
  /** Sets the channel's filter of the project (`null` removes it), `what` as its last change; null when not subscribed. */
  setFilter(
    projectId: string,
    channel: string,
    filter: ChannelFilter | null,
    what: string,
    actor: Actor,
    nowMs: number,
  ): Promise<Subscription | null>;
  /** Every channel subscribed to the project (digest routing). */
  forProject(projectId: string): Promise<Subscription[]>;
  /** Every project the channel subscribes (`list`). */
  forChannel(channel: string): Promise<Subscription[]>;
  /** Every subscription (`bridge subscriptions list`); a full scan, for operators only. */
  listAll(): Promise<Subscription[]>;
  /**
   * Marks the subscription broken (digests skip it until it is subscribed again). The subscription as
   * marked when this call marked it; null when it was already broken or is gone (only one caller notifies).
   */
  markBroken(projectId: string, channel: string, code: string, nowMs: number): Promise<Subscription | null>;
  /** Appends a change to the channel's history (unsubscribes included: they delete the subscription). */
  recordChange(channel: string, entry: AuditEntry): Promise<void>;
  /** The channel's newest changes (at most `AUDIT_KEPT`), newest first. */
  recentChanges(channel: string): Promise<AuditEntry[]>;
}

// --- Channel filters and quiet hours (the Slack app sets them, the digest applies them) ---------

/** Alert levels a channel filter can ask for, most severe first. */
export type AlertLevel = 'critical' | 'error' | 'warning' | 'info';

/** What of a run a channel hears (shared/digest/channel-filter.ts applies it). */
export interface ChannelFilter {
  /** Engine names as typed (shown back as typed); none = every engine. */
  engines?: readonly string[] | undefined;
  /** Alerts at this level or more severe; none = every alert. */
  minAlertLevel?: AlertLevel | undefined;
  /** Changes smaller than this (in the figure's unit: points for a share) are not called; none = the noise alone decides. */
  minChange?: number | undefined;
}

/** A daily quiet window: from `startMinute` (inclusive) to `endMinute` (exclusive), minutes after local midnight in `timeZone` (IANA). */
export interface QuietWindow {
  startMinute: number;
  endMinute: number;
  timeZone: string;
}

export interface QuietSetting {
  window: QuietWindow;
  setBy: string;
  setAtMs: number;
}

/** A digest held in a channel's quiet hours, as the catch-up lists it. */
export interface HeldRun {
  eventId: string;
  projectId: string;
  /** The digest's one-line fallback as the renderer wrote it (already safe mrkdwn): mark, project and headline. */
  headline: string;
  /** The run's dashboard page (from the validated template), when there is one. */
  link?: string | undefined;
  /** The run's created_at. */
  createdAt: string;
  heldAtMs: number;
  /** When its channel's window (as it was when held) ends: the catch-up posts it at the first sweep from then. */
  catchUpAfterMs: number;
  /** Earlier held runs of the same project no longer kept (a channel keeps `HELD_RUNS_KEPT`): the catch-up says how many. */
  earlier?: number | undefined;
}

/**
 * How many held runs a channel keeps by line (the catch-up lists as many). Past it, a hold drops the oldest
 * run of a project that has a newer one and counts it on that project's newest (`earlier`): the newest of
 * each project is always kept, so a channel holds at most this many runs or one per project.
 */
export const HELD_RUNS_KEPT = 30;

/** A channel with held runs, as the index knows it. */
export interface HeldChannel {
  channel: string;
  /** The earliest `catchUpAfterMs` of its runs (0 when unknown: held before it was recorded). */
  dueMs: number;
}

/** A channel's catch-up, taken: the runs it covers (held before its first claim, and due by then or all of them). */
export interface HeldClaim {
  token: string;
  /** 1 for the first claim of this catch-up; more after a failed or crashed attempt. */
  attempt: number;
  /** When the catch-up was first claimed: its id, and the runs it covers. */
  sinceMs: number;
  runs: HeldRun[];
}

export type HeldClaimResult = { status: 'claimed'; claim: HeldClaim } | { status: 'busy' } | { status: 'none' };

/** Quiet hours and held digests (shared/digest/held-digests.ts). Errors of the backing store propagate. */
export interface QuietHoursStore {
  /** The quiet windows of these channels (channels without one are absent). */
  windowsOf(channels: readonly string[]): Promise<Map<string, QuietSetting>>;
  /** Sets the channel's window, or removes it (`null`). */
  setWindow(channel: string, window: QuietWindow | null, actor: Actor, nowMs: number): Promise<void>;
  /** Holds a run for the channel's catch-up (at most `HELD_RUNS_KEPT` kept, see there); holding the same event again changes nothing. */
  hold(channel: string, run: HeldRun): Promise<void>;
  /** The channels that have held runs, with when the first is due. */
  channelsWithHeld(): Promise<HeldChannel[]>;
  /**
   * Takes the channel's catch-up for `leaseMs`. It covers the runs held before its first claim that are due
   * by then (`catchUpAfterMs`), or all of them when `dueOnly` is false (the channel's quiet hours were turned
   * off); a retry keeps what its first claim chose.
   */
  claimHeld(channel: string, nowMs: number, leaseMs: number, dueOnly: boolean): Promise<HeldClaimResult>;
  /** Removes the posted runs and ends the claim (conditional on it); drops the channel from the index when nothing is left. */
  finishHeld(channel: string, token: string, postedEventIds: readonly string[]): Promise<void>;
  /** Ends the claim without removing anything (the next sweep tries again). */
  releaseHeld(channel: string, token: string): Promise<void>;
}

/** How many changes a channel's history keeps. */
export const AUDIT_KEPT = 20;

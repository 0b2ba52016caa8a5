/**
 * In-memory doubles of the bridge's stores, faithful to the ports' contracts as the DynamoDB adapters
 * implement them (conditional writes become checks under one synchronous step): subscriptions with their
 * settings and history, quiet hours and held runs with the catch-up claim, and the digest's posting
 * claims, newest-run mark and snapshots. For tests that run thousands of sequences (the model-based test
 * of per-channel delivery); the adapters themselves are tested against dynalite.
 * Every value is copied in and out, so a caller can't change what is stored by holding a reference.
 */
import { randomUUID } from 'node:crypto';
import type { DigestMode } from '../../shared/contracts';
import { foldHeld } from '../../shared/digest/held-runs';
import {
  AUDIT_KEPT,
  HELD_RUNS_KEPT,
  type Actor,
  type AuditEntry,
  type ChannelFilter,
  type DigestClaim,
  type DigestStore,
  type HeldChannel,
  type HeldClaimResult,
  type HeldRun,
  type NewSubscription,
  type PostingProgress,
  type ProjectSnapshot,
  type QuietHoursStore,
  type QuietSetting,
  type QuietWindow,
  type SettingsChange,
  type SubscribeResult,
  type Subscription,
  type SubscriptionStore,
} from '../../shared/ports';

const copy = <T>(value: T): T => structuredClone(value);

// --- Subscriptions -----------------------------------------------------------------------------

/** DynamoSubscriptionStore's behaviour: `sub#<project>` entries by channel, the channel history capped at AUDIT_KEPT. */
export class MemorySubscriptionStore implements SubscriptionStore {
  private readonly byProject = new Map<string, Map<string, Subscription>>();
  private readonly audit = new Map<string, AuditEntry[]>();

  constructor(private readonly defaultMode: DigestMode = 'full') {}

  subscribe(input: NewSubscription): Promise<SubscribeResult> {
    const channels = this.channelsOf(input.projectId);
    const existing = channels.get(input.channel);
    // Subscribing again repairs a broken subscription; any other existing one keeps its settings.
    if (existing !== undefined && existing.broken === undefined)
      return Promise.resolve({ status: 'already', subscription: copy(existing) });
    const subscription: Subscription = {
      projectId: input.projectId,
      projectName: input.projectName,
      channel: input.channel,
      mode: input.mode ?? this.defaultMode,
      ...(input.mutedUntilMs === undefined ? {} : { mutedUntilMs: input.mutedUntilMs }),
      createdBy: input.actor.userId,
      createdAtMs: input.nowMs,
      changedBy: input.actor.userId,
      changedAtMs: input.nowMs,
      lastChange: input.lastChange ?? 'subscribed',
    };
    channels.set(input.channel, subscription);
    return Promise.resolve({ status: 'subscribed', subscription: copy(subscription) });
  }

  unsubscribe(projectId: string, channel: string): Promise<boolean> {
    return Promise.resolve(this.channelsOf(projectId).delete(channel));
  }

  change(projectId: string, channel: string, change: SettingsChange, actor: Actor, nowMs: number): Promise<Subscription | null> {
    return this.update(projectId, channel, actor, nowMs, (s) => {
      if (change.kind === 'mute') return { ...s, mutedUntilMs: change.untilMs, lastChange: `muted for ${change.label}` };
      if (change.kind === 'unmute') {
        const { mutedUntilMs: _removed, ...rest } = s;
        return { ...rest, lastChange: 'unmuted' };
      }
      return { ...s, mode: change.mode, lastChange: `mode ${change.mode}` };
    });
  }

  setFilter(
    projectId: string,
    channel: string,
    filter: ChannelFilter | null,
    what: string,
    actor: Actor,
    nowMs: number,
  ): Promise<Subscription | null> {
    return this.update(projectId, channel, actor, nowMs, (s) => {
      const { filter: _old, ...rest } = s;
      return { ...rest, ...(filter === null ? {} : { filter: copy(filter) }), lastChange: what };
    });
  }

  forProject(projectId: string): Promise<Subscription[]> {
    return Promise.resolve([...this.channelsOf(projectId).values()].map(copy));
  }

  forChannel(channel: string): Promise<Subscription[]> {
    const found = [...this.byProject.values()].flatMap((channels) => {
      const s = channels.get(channel);
      return s === undefined ? [] : [copy(s)];
    });
    return Promise.resolve(found);
  }

  listAll(): Promise<Subscription[]> {
    return Promise.resolve([...this.byProject.values()].flatMap((channels) => [...channels.values()].map(copy)));
  }

  markBroken(projectId: string, channel: string, code: string, nowMs: number): Promise<Subscription | null> {
    const s = this.channelsOf(projectId).get(channel);
    if (s === undefined || s.broken !== undefined) return Promise.resolve(null);
    const marked = { ...s, broken: { code, atMs: nowMs } };
    this.channelsOf(projectId).set(channel, marked);
    return Promise.resolve(copy(marked));
  }

  recordChange(channel: string, entry: AuditEntry): Promise<void> {
    this.audit.set(channel, [...(this.audit.get(channel) ?? []), copy(entry)].slice(-AUDIT_KEPT));
    return Promise.resolve();
  }

  recentChanges(channel: string): Promise<AuditEntry[]> {
    return Promise.resolve([...(this.audit.get(channel) ?? [])].reverse().map(copy));
  }

  private channelsOf(projectId: string): Map<string, Subscription> {
    let channels = this.byProject.get(projectId);
    if (channels === undefined) {
      channels = new Map();
      this.byProject.set(projectId, channels);
    }
    return channels;
  }

  /** The entry's conditional update: null when the channel is not subscribed to the project. */
  private update(
    projectId: string,
    channel: string,
    actor: Actor,
    nowMs: number,
    apply: (s: Subscription) => Subscription,
  ): Promise<Subscription | null> {
    const s = this.channelsOf(projectId).get(channel);
    if (s === undefined) return Promise.resolve(null);
    const changed = { ...apply(s), changedBy: actor.userId, changedAtMs: nowMs };
    this.channelsOf(projectId).set(channel, changed);
    return Promise.resolve(copy(changed));
  }
}

// --- Quiet hours -------------------------------------------------------------------------------

/** As DynamoQuietHoursStore: at most this many runs folded by one hold. */
const MAX_FOLDED_PER_HOLD = 10;

interface HeldItem {
  runs: Map<string, HeldRun>;
  /** Bumped by every hold that stores a run (not by a catch-up removing runs). */
  version: number;
  claim?: { token: string; untilMs: number } | undefined;
  /** Kept across a released claim: the retry covers the same runs. */
  sinceMs?: number | undefined;
  cutoffMs?: number | undefined;
  attempts: number;
}

/** The sweep's index entry of a channel: the newest version seen and the earliest due time. */
interface IndexEntry {
  version?: number | undefined;
  dueMs?: number | undefined;
}

/**
 * DynamoQuietHoursStore's behaviour: a window per channel; held runs per channel (a run holds once, at most
 * `HELD_RUNS_KEPT` or one per project, the oldest folded) under one catch-up claim that covers the runs held
 * before its first claim and due by then (or all of them); an index of channels with their earliest due time,
 * raised/lowered by holds, corrected by a finished catch-up unless a hold came since. The held item stays
 * (empty) after its last run is posted, as the DynamoDB item does.
 */
export class MemoryQuietHoursStore implements QuietHoursStore {
  private readonly windows = new Map<string, QuietSetting>();
  private readonly held = new Map<string, HeldItem>();
  private readonly index = new Map<string, IndexEntry>();

  windowsOf(channels: readonly string[]): Promise<Map<string, QuietSetting>> {
    const found = new Map<string, QuietSetting>();
    for (const channel of channels) {
      const setting = this.windows.get(channel);
      if (setting !== undefined) found.set(channel, copy(setting));
    }
    return Promise.resolve(found);
  }

  setWindow(channel: string, window: QuietWindow | null, actor: Actor, nowMs: number): Promise<void> {
    if (window === null) this.windows.delete(channel);
    else this.windows.set(channel, { window: copy(window), setBy: actor.userId, setAtMs: nowMs });
    return Promise.resolve();
  }

  hold(channel: string, run: HeldRun): Promise<void> {
    let item = this.held.get(channel);
    if (item === undefined) {
      item = { runs: new Map(), version: 0, attempts: 0 };
      this.held.set(channel, item);
    }
    if (!item.runs.has(run.eventId)) {
      const stored = [...item.runs.values()];
      const { kept } = foldHeld([...stored, copy(run)], Math.max(HELD_RUNS_KEPT, stored.length + 1 - MAX_FOLDED_PER_HOLD));
      item.runs = new Map(kept.map((r) => [r.eventId, r]));
      item.version += 1;
    }
    // After the run is stored, as the adapter does: the version only upwards, the due time only downwards.
    const entry = this.index.get(channel) ?? {};
    if (entry.version === undefined || entry.version < item.version) entry.version = item.version;
    if (entry.dueMs === undefined || entry.dueMs >= run.catchUpAfterMs) entry.dueMs = run.catchUpAfterMs;
    this.index.set(channel, entry);
    return Promise.resolve();
  }

  channelsWithHeld(): Promise<HeldChannel[]> {
    return Promise.resolve(
      [...this.index.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([channel, entry]) => ({ channel, dueMs: entry.dueMs ?? 0 })),
    );
  }

  claimHeld(channel: string, nowMs: number, leaseMs: number, dueOnly: boolean): Promise<HeldClaimResult> {
    const item = this.held.get(channel);
    if (item === undefined) {
      this.index.delete(channel);
      return Promise.resolve({ status: 'none' });
    }
    if (item.claim !== undefined && item.claim.untilMs >= nowMs) return Promise.resolve({ status: 'busy' });
    const token = randomUUID();
    item.claim = { token, untilMs: nowMs + leaseMs };
    item.sinceMs ??= nowMs;
    item.cutoffMs ??= dueOnly ? nowMs : Number.MAX_SAFE_INTEGER;
    item.attempts += 1;
    const { sinceMs, cutoffMs } = item;
    const runs = [...item.runs.values()].filter((run) => run.heldAtMs <= sinceMs && run.catchUpAfterMs <= cutoffMs).map(copy);
    return Promise.resolve({ status: 'claimed', claim: { token, attempt: item.attempts, sinceMs, runs } });
  }

  finishHeld(channel: string, token: string, postedEventIds: readonly string[]): Promise<void> {
    const item = this.held.get(channel);
    // The lease ran out and another sweep took the catch-up: it finishes.
    if (item?.claim?.token !== token) return Promise.resolve();
    for (const id of postedEventIds) item.runs.delete(id);
    item.claim = undefined;
    item.sinceMs = undefined;
    item.cutoffMs = undefined;
    item.attempts = 0;
    const entry = this.index.get(channel);
    // Unless a hold came since (it moved the entry's version on and lowered the due time itself).
    if (entry?.version !== undefined && entry.version > item.version) return Promise.resolve();
    if (item.runs.size === 0) this.index.delete(channel);
    else this.index.set(channel, { ...entry, dueMs: Math.min(...[...item.runs.values()].map((run) => run.catchUpAfterMs)) });
    return Promise.resolve();
  }

  releaseHeld(channel: string, token: string): Promise<void> {
    const item = this.held.get(channel);
    if (item?.claim?.token === token) item.claim = undefined;
    return Promise.resolve();
  }
}

// --- Digest claims and snapshots ---------------------------------------------------------------

interface LeaseRecord {
  state: 'in_progress' | 'posted' | 'skipped';
  owner: string;
  leaseUntilMs: number;
  attempts: number;
  firstClaimedMs: number;
  progress: PostingProgress;
}

/** DynamoDigestStore's behaviour: leases per event and per event and channel, the newest-run mark, snapshots kept newest. */
export class MemoryDigestStore implements DigestStore {
  private readonly leases = new Map<string, LeaseRecord>();
  private readonly newest = new Map<string, { ms: number; eventId: string }>();
  private readonly snapshots = new Map<string, ProjectSnapshot>();

  constructor(private readonly leaseMs = 600_000) {}

  claim(eventId: string, nowMs: number): Promise<DigestClaim> {
    return Promise.resolve(this.claimAt(`digest#${eventId}`, nowMs));
  }

  recordProgress(eventId: string, token: string, progress: PostingProgress): Promise<void> {
    return this.progressAt(`digest#${eventId}`, token, progress);
  }

  finish(eventId: string, token: string, outcome: 'posted' | 'skipped'): Promise<void> {
    return this.finishAt(`digest#${eventId}`, token, outcome);
  }

  release(eventId: string, token: string): Promise<void> {
    return this.releaseAt(`digest#${eventId}`, token);
  }

  markNewestRun(projectId: string, createdAtMs: number, eventId: string): Promise<boolean> {
    const mark = this.newest.get(projectId);
    // Equal times: only the event holding the mark keeps it (its own retry).
    if (mark !== undefined && !(mark.ms < createdAtMs || (mark.ms === createdAtMs && mark.eventId === eventId)))
      return Promise.resolve(false);
    this.newest.set(projectId, { ms: createdAtMs, eventId });
    return Promise.resolve(true);
  }

  claimChannel(eventId: string, channel: string, nowMs: number): Promise<DigestClaim> {
    return Promise.resolve(this.claimAt(`post#${channel}#${eventId}`, nowMs));
  }

  recordChannelProgress(eventId: string, channel: string, token: string, progress: PostingProgress): Promise<void> {
    return this.progressAt(`post#${channel}#${eventId}`, token, progress);
  }

  finishChannel(eventId: string, channel: string, token: string): Promise<void> {
    return this.finishAt(`post#${channel}#${eventId}`, token, 'posted');
  }

  releaseChannel(eventId: string, channel: string, token: string): Promise<void> {
    return this.releaseAt(`post#${channel}#${eventId}`, token);
  }

  getSnapshot(projectId: string): Promise<ProjectSnapshot | null> {
    const snapshot = this.snapshots.get(projectId);
    return Promise.resolve(snapshot === undefined ? null : copy(snapshot));
  }

  putSnapshot(snapshot: ProjectSnapshot): Promise<void> {
    const stored = this.snapshots.get(snapshot.projectId);
    if (stored === undefined || Date.parse(stored.lastCreatedAt) <= Date.parse(snapshot.lastCreatedAt))
      this.snapshots.set(snapshot.projectId, copy(snapshot));
    return Promise.resolve();
  }

  private claimAt(key: string, nowMs: number): DigestClaim {
    const record = this.leases.get(key);
    if (record === undefined || (record.state === 'in_progress' && record.leaseUntilMs < nowMs)) {
      const taken: LeaseRecord = {
        state: 'in_progress',
        owner: randomUUID(),
        leaseUntilMs: nowMs + this.leaseMs,
        attempts: (record?.attempts ?? 0) + 1,
        firstClaimedMs: record?.firstClaimedMs ?? nowMs,
        progress: record?.progress ?? { repliesPosted: 0 },
      };
      this.leases.set(key, taken);
      return {
        status: 'claimed',
        token: taken.owner,
        progress: copy(taken.progress),
        attempt: taken.attempts,
        firstClaimedMs: taken.firstClaimedMs,
      };
    }
    if (record.state !== 'in_progress') return { status: 'done', outcome: record.state, mainTs: record.progress.mainTs };
    return { status: 'busy', retryAfterSeconds: Math.max(1, Math.ceil((record.leaseUntilMs - nowMs) / 1000)) };
  }

  /** Conditional on the owner, as the adapter's `#owner = :token`: a lost lease throws. */
  private progressAt(key: string, token: string, progress: PostingProgress): Promise<void> {
    const record = this.owned(key, token);
    record.progress = {
      repliesPosted: progress.repliesPosted,
      ...((progress.channel ?? record.progress.channel) === undefined ? {} : { channel: progress.channel ?? record.progress.channel }),
      ...((progress.mainTs ?? record.progress.mainTs) === undefined ? {} : { mainTs: progress.mainTs ?? record.progress.mainTs }),
    };
    return Promise.resolve();
  }

  private finishAt(key: string, token: string, outcome: 'posted' | 'skipped'): Promise<void> {
    this.owned(key, token).state = outcome;
    return Promise.resolve();
  }

  private releaseAt(key: string, token: string): Promise<void> {
    const record = this.leases.get(key);
    if (record?.owner === token && record.state === 'in_progress') record.leaseUntilMs = 0;
    return Promise.resolve();
  }

  private owned(key: string, token: string): LeaseRecord {
    const record = this.leases.get(key);
    if (record?.owner !== token) throw new Error(`the claim ${key} is no longer held by this token`);
    return record;
  }
}

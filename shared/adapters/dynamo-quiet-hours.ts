/**
 * QuietHoursStore on the bridge's one table (pk only, no transactions — dynalite has none):
 *   quiet#<channel>  the channel's window: start, end (minutes after local midnight), tz, set_by, set_at.
 *   held#<channel>   the digests held for its catch-up: one map attribute `r_<event id>` per run
 *                    {pid, headline, link?, created, held_at, after (its catch-up time), earlier?}, at most
 *                    `HELD_RUNS_KEPT` or one per project (older runs of a project are folded into its newest
 *                    as `earlier`, ../digest/held-runs.ts), so the item stays small whatever the number of
 *                    holds; a `version` counter bumped by every hold (each hold is a read, then a write
 *                    conditional on it), and the catch-up claim (claim_token, claim_until, claim_since,
 *                    claim_cutoff, claim_attempts).
 *   held#~index      the channels with held runs: `ch_<channel>` = the newest version seen (written only
 *                    upwards) and `due_<channel>` = the earliest catch-up time of its runs, so the sweep reads
 *                    one item; a finished catch-up drops its channel only while no hold came since
 *                    (conditional on the version it left).
 * A connection's `held#` items are keyed `t#<connection id>#held#…` (../tenancy.ts): each tenant's catch-up
 * posts only its own runs. `quiet#` is the channel's, whoever's digests it hears.
 * Errors are wrapped in SlackAppStoreError naming the operation.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';
import { batchGetAll } from './dynamo-batch-get';
import { storeGuard } from './store-guard';
import { foldHeld } from '../digest/held-runs';
import { HELD_RUNS_KEPT } from '../ports';
import type { Actor, HeldChannel, HeldClaimResult, HeldRun, QuietHoursStore, QuietSetting, QuietWindow } from '../ports';

type Item = Record<string, AttributeValue>;

const RUN_PREFIX = 'r_';
const INDEX_PREFIX = 'ch_';
const DUE_PREFIX = 'due_';
const CLAIM_ATTRIBUTES = ['claim_token', 'claim_until', 'claim_since', 'claim_cutoff', 'claim_attempts'];
/** Holds racing on one channel retry this often before the hold fails (the run goes on in its other channels). */
const HOLD_ATTEMPTS = 8;
/** At most this many runs folded by one hold (an item from before the limit shrinks over a few holds). */
const MAX_FOLDED_PER_HOLD = 10;
/** Channel ids are upper-case letters and digits: `~index` can't be one. */
const INDEX_SUFFIX = '~index';
/** A stored headline is cut to this: `HELD_RUNS_KEPT` (or one per project) of them stay far below 400 KB. */
const HEADLINE_CHARS = 600;

export class DynamoQuietHoursStore implements QuietHoursStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** Whose held digests: a connection's are keyed under its tenant prefix; a channel's window is not (a channel's, not a tenant's). */
    private readonly tenant: Tenant = STACK_TENANT,
  ) {}

  private heldKey(channel: string): Item {
    return pk(tenantKey(this.tenant, `${TABLE.prefixes.held}${channel}`));
  }

  private indexKey(): Item {
    return pk(tenantKey(this.tenant, `${TABLE.prefixes.held}${INDEX_SUFFIX}`));
  }

  async windowsOf(channels: readonly string[]): Promise<Map<string, QuietSetting>> {
    return guard('windowsOf', async () => {
      const settings = new Map<string, QuietSetting>();
      const keys = [...new Set(channels)].map(quietKey);
      for (const item of await batchGetAll(this.client, this.tableName, keys, 'quiet-hours')) {
        const parsed = parseSetting(item);
        if (parsed) settings.set(parsed.channel, parsed.setting);
      }
      return settings;
    });
  }

  async setWindow(channel: string, window: QuietWindow | null, actor: Actor, nowMs: number): Promise<void> {
    return guard('setWindow', async () => {
      if (window === null) {
        await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: quietKey(channel) }));
        return;
      }
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...quietKey(channel),
            channel: { S: channel },
            start: { N: String(window.startMinute) },
            end: { N: String(window.endMinute) },
            tz: { S: window.timeZone },
            set_by: { S: actor.userId },
            set_at: { N: String(nowMs) },
          },
        }),
      );
    });
  }

  async hold(channel: string, run: HeldRun): Promise<void> {
    return guard('hold', async () => {
      const version = await this.keep(channel, run);
      // After the run is stored: a sweep that sees the index entry finds the run.
      await this.index(channel, version, run.catchUpAfterMs);
    });
  }

  /**
   * The channel's index entry: its version raised to `version` and its due time lowered to `dueMs`, each
   * only in that direction. One write when both move that way (the usual hold), else one write each.
   */
  private async index(channel: string, version: string, dueMs: number): Promise<void> {
    const entry = (update: string, condition: string, names: Record<string, string>, values: Item) =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.indexKey(),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    const c = { '#c': `${INDEX_PREFIX}${channel}` };
    const d = { '#d': `${DUE_PREFIX}${channel}` };
    const v = { ':v': { N: version } };
    const due = { ':due': { N: String(dueMs) } };
    const raise = 'attribute_not_exists(#c) OR #c < :v';
    const lower = 'attribute_not_exists(#d) OR #d >= :due';
    try {
      await entry('SET #c = :v, #d = :due', `(${raise}) AND (${lower})`, { ...c, ...d }, { ...v, ...due });
      return;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    await this.conditional(() => entry('SET #d = :due', lower, d, due));
    await this.conditional(() => entry('SET #c = :v', raise, c, v));
  }

  /**
   * Stores the run on the channel's item, folding the oldest past `HELD_RUNS_KEPT` (../digest/held-runs.ts):
   * read, then a write conditional on the version read (every hold bumps it) and on the runs it rewrites or
   * removes still being there (a catch-up removes runs without bumping it). The item's version after the hold.
   */
  private async keep(channel: string, run: HeldRun): Promise<string> {
    for (let attempt = 1; attempt <= HOLD_ATTEMPTS; attempt++) {
      const read = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: this.heldKey(channel), ConsistentRead: true }),
      );
      const item = read.Item ?? {};
      const version = Number(item['version']?.N ?? 0);
      // Held already (a retried run): only the index is written again.
      if (item[runName(run.eventId)] !== undefined) return String(version);
      try {
        await this.client.send(
          new UpdateItemCommand({ TableName: this.tableName, Key: this.heldKey(channel), ...holdUpdate(channel, run, item) }),
        );
        return String(version + 1);
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    throw new Error(`the held digests of ${channel} changed under ${HOLD_ATTEMPTS} attempts to hold one more`);
  }

  async channelsWithHeld(): Promise<HeldChannel[]> {
    return guard('channelsWithHeld', async () => {
      const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.indexKey(), ConsistentRead: true }));
      const item = result.Item ?? {};
      const channels = new Set<string>();
      for (const name of Object.keys(item)) {
        if (name.startsWith(INDEX_PREFIX)) channels.add(name.slice(INDEX_PREFIX.length));
        if (name.startsWith(DUE_PREFIX)) channels.add(name.slice(DUE_PREFIX.length));
      }
      return [...channels].sort().map((channel) => ({ channel, dueMs: Number(item[`${DUE_PREFIX}${channel}`]?.N ?? 0) }));
    });
  }

  async claimHeld(channel: string, nowMs: number, leaseMs: number, dueOnly: boolean): Promise<HeldClaimResult> {
    return guard('claimHeld', async () => {
      const token = `${nowMs}-${Math.random().toString(36).slice(2, 10)}`;
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: this.heldKey(channel),
            UpdateExpression:
              'SET claim_token = :t, claim_until = :until, claim_since = if_not_exists(claim_since, :now), ' +
              'claim_cutoff = if_not_exists(claim_cutoff, :cutoff) ADD claim_attempts :one',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(claim_until) OR claim_until < :now)',
            ExpressionAttributeValues: {
              ':t': { S: token },
              ':until': { N: String(nowMs + leaseMs) },
              ':now': { N: String(nowMs) },
              ':cutoff': { N: String(dueOnly ? nowMs : Number.MAX_SAFE_INTEGER) },
              ':one': { N: '1' },
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        const item = result.Attributes ?? {};
        const sinceMs = Number(item['claim_since']?.N ?? nowMs);
        const cutoffMs = Number(item['claim_cutoff']?.N ?? nowMs);
        const runs = runsOf(item).filter((run) => run.heldAtMs <= sinceMs && run.catchUpAfterMs <= cutoffMs);
        return { status: 'claimed', claim: { token, attempt: Number(item['claim_attempts']?.N ?? 1), sinceMs, runs } };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      const existing = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: this.heldKey(channel), ConsistentRead: true }),
      );
      if (existing.Item !== undefined) return { status: 'busy' };
      // An index entry without its item (a hold that failed half-way can't leave one; an item deleted by hand can).
      await this.dropFromIndex(channel, undefined);
      return { status: 'none' };
    });
  }

  async finishHeld(channel: string, token: string, postedEventIds: readonly string[]): Promise<void> {
    return guard('finishHeld', async () => {
      const names: Record<string, string> = {};
      postedEventIds.forEach((id, i) => (names[`#r${i}`] = runName(id)));
      const removed = [...CLAIM_ATTRIBUTES, ...Object.keys(names)].join(', ');
      let item: Item | undefined;
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: this.heldKey(channel),
            UpdateExpression: `REMOVE ${removed}`,
            ConditionExpression: 'claim_token = :t',
            ...(postedEventIds.length > 0 ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: { ':t': { S: token } },
            ReturnValues: 'ALL_NEW',
          }),
        );
        item = result.Attributes;
      } catch (error) {
        // The lease ran out and another sweep took the catch-up: it finds this one's post and finishes.
        if (error instanceof ConditionalCheckFailedException) return;
        throw error;
      }
      const left = item === undefined ? [] : runsOf(item);
      if (left.length === 0) {
        await this.dropFromIndex(channel, item?.['version']?.N);
        return;
      }
      // The next due of what is left, unless a hold came since (it lowered the entry itself; the next sweep corrects it).
      await this.conditional(() =>
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: this.indexKey(),
            UpdateExpression: 'SET #d = :due',
            ConditionExpression: 'attribute_not_exists(#c) OR #c <= :v',
            ExpressionAttributeNames: { '#c': `${INDEX_PREFIX}${channel}`, '#d': `${DUE_PREFIX}${channel}` },
            ExpressionAttributeValues: {
              ':due': { N: String(Math.min(...left.map((run) => run.catchUpAfterMs))) },
              ':v': { N: item?.['version']?.N ?? '0' },
            },
          }),
        ),
      );
    });
  }

  async releaseHeld(channel: string, token: string): Promise<void> {
    return guard('releaseHeld', () =>
      this.conditional(() =>
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: this.heldKey(channel),
            // claim_since, claim_cutoff and claim_attempts stay: the retry covers the same runs and looks in Slack first.
            UpdateExpression: 'REMOVE claim_token, claim_until',
            ConditionExpression: 'claim_token = :t',
            ExpressionAttributeValues: { ':t': { S: token } },
          }),
        ),
      ),
    );
  }

  /** Drops the channel from the index unless a hold since moved its version on. */
  private async dropFromIndex(channel: string, version: string | undefined): Promise<void> {
    await this.conditional(() =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.indexKey(),
          UpdateExpression: 'REMOVE #c, #d',
          ExpressionAttributeNames: { '#c': `${INDEX_PREFIX}${channel}`, '#d': `${DUE_PREFIX}${channel}` },
          ...(version === undefined
            ? {}
            : { ConditionExpression: 'attribute_not_exists(#c) OR #c <= :v', ExpressionAttributeValues: { ':v': { N: version } } }),
        }),
      ),
    );
  }

  /** Runs a conditional write; a failed condition is an expected outcome, not an error. */
  private async conditional(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/** Every operation's errors become a SlackAppStoreError naming it. */
const guard = storeGuard('quiet-hours store');

function quietKey(channel: string): Item {
  return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.quiet}${channel}` } };
}

function pk(key: string): Item {
  return { [TABLE.partitionKey]: { S: key } };
}

function parseSetting(item: Item): { channel: string; setting: QuietSetting } | undefined {
  const channel = item['channel']?.S;
  const start = Number(item['start']?.N);
  const end = Number(item['end']?.N);
  const timeZone = item['tz']?.S;
  if (channel === undefined || timeZone === undefined || !Number.isInteger(start) || !Number.isInteger(end)) return undefined;
  return {
    channel,
    setting: {
      window: { startMinute: start, endMinute: end, timeZone },
      setBy: item['set_by']?.S ?? '',
      setAtMs: Number(item['set_at']?.N ?? 0),
    },
  };
}

function runName(eventId: string): string {
  return `${RUN_PREFIX}${eventId}`;
}

/** The write that adds `run` to the held item read as `item`, folding the oldest past the limit; conditional on nothing having changed. */
function holdUpdate(channel: string, run: HeldRun, item: Item) {
  const stored = runsOf(item);
  const { kept, dropped, grown } = foldHeld([...stored, run], Math.max(HELD_RUNS_KEPT, stored.length + 1 - MAX_FOLDED_PER_HOLD));
  const isNew = (r: HeldRun) => r.eventId === run.eventId;
  // The new run (unless it is itself the one folded), the newest runs that now count more, and the runs folded.
  const written = [...kept.filter(isNew), ...grown.filter((r) => !isNew(r))];
  const removed = dropped.filter((r) => !isNew(r));
  const names: Record<string, string> = { '#new': runName(run.eventId) };
  const values: Item = { ':ch': { S: channel }, ':one': { N: '1' } };
  const sets = ['channel = :ch'];
  // A catch-up removes runs without bumping the version: the runs rewritten or removed must still be there.
  const present: string[] = [];
  written.forEach((r, i) => {
    names[`#w${i}`] = runName(r.eventId);
    values[`:w${i}`] = runValue(r);
    sets.push(`#w${i} = :w${i}`);
    if (!isNew(r)) present.push(`attribute_exists(#w${i})`);
  });
  removed.forEach((r, i) => {
    names[`#x${i}`] = runName(r.eventId);
    present.push(`attribute_exists(#x${i})`);
  });
  const version = item['version'];
  if (version !== undefined) values[':v'] = version;
  const remove = removed.length === 0 ? '' : ` REMOVE ${removed.map((_, i) => `#x${i}`).join(', ')}`;
  return {
    UpdateExpression: `SET ${sets.join(', ')}${remove} ADD version :one`,
    ConditionExpression: [
      'attribute_not_exists(#new)',
      version === undefined ? 'attribute_not_exists(version)' : 'version = :v',
      ...present,
    ].join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

function runValue(run: HeldRun): AttributeValue {
  return {
    M: {
      pid: { S: run.projectId },
      headline: { S: run.headline.slice(0, HEADLINE_CHARS) },
      created: { S: run.createdAt },
      held_at: { N: String(run.heldAtMs) },
      after: { N: String(run.catchUpAfterMs) },
      ...(run.earlier === undefined || run.earlier === 0 ? {} : { earlier: { N: String(run.earlier) } }),
      ...(run.link === undefined ? {} : { link: { S: run.link } }),
    },
  };
}

function runsOf(item: Item): HeldRun[] {
  return Object.entries(item).flatMap(([name, value]) => {
    const m = value.M;
    if (!name.startsWith(RUN_PREFIX) || m === undefined) return [];
    const link = m['link']?.S;
    return [
      {
        eventId: name.slice(RUN_PREFIX.length),
        projectId: m['pid']?.S ?? '',
        headline: m['headline']?.S ?? '',
        ...(link === undefined ? {} : { link }),
        createdAt: m['created']?.S ?? '',
        heldAtMs: Number(m['held_at']?.N ?? 0),
        // Held before the due time was recorded: due at once.
        catchUpAfterMs: Number(m['after']?.N ?? 0),
        ...(m['earlier']?.N === undefined ? {} : { earlier: Number(m['earlier'].N) }),
      },
    ];
  });
}

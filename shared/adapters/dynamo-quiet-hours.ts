/**
 * QuietHoursStore on the bridge's one table (pk only, no transactions — dynalite has none):
 *   quiet#<channel>  the channel's window: start, end (minutes after local midnight), tz, set_by, set_at.
 *   held#<channel>   the digests held for its catch-up: one map attribute `r_<event id>` per run
 *                    {pid, headline, link?, created, held_at} (written with if_not_exists: a retried run
 *                    holds once), a `version` counter bumped by every hold, and the catch-up claim
 *                    (claim_token, claim_until, claim_since, claim_attempts).
 *   held#~index      the channels with held runs: `ch_<channel>` = the newest version seen (written only
 *                    upwards), so the sweep reads one item; a finished catch-up drops its channel only
 *                    while no hold came since (conditional on the version it left).
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
import { batchGetAll } from './dynamo-batch-get';
import { storeGuard } from './store-guard';
import type { Actor, HeldClaimResult, HeldRun, QuietHoursStore, QuietSetting, QuietWindow } from '../ports';

type Item = Record<string, AttributeValue>;

const RUN_PREFIX = 'r_';
const INDEX_PREFIX = 'ch_';
/** Channel ids are upper-case letters and digits: `~index` can't be one. */
const INDEX_SUFFIX = '~index';
/** A stored headline is cut to this (a held item holds many runs, far below 400 KB). */
const HEADLINE_CHARS = 600;

export class DynamoQuietHoursStore implements QuietHoursStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

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
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: heldKey(channel),
          UpdateExpression: 'SET #r = if_not_exists(#r, :run), channel = :ch ADD version :one',
          ExpressionAttributeNames: { '#r': `${RUN_PREFIX}${run.eventId}` },
          ExpressionAttributeValues: { ':run': runValue(run), ':ch': { S: channel }, ':one': { N: '1' } },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const version = result.Attributes?.['version']?.N ?? '1';
      // After the run is stored: a sweep that sees the index entry finds the run.
      await this.conditional(() =>
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: indexKey(),
            UpdateExpression: 'SET #c = :v',
            ConditionExpression: 'attribute_not_exists(#c) OR #c < :v',
            ExpressionAttributeNames: { '#c': `${INDEX_PREFIX}${channel}` },
            ExpressionAttributeValues: { ':v': { N: version } },
          }),
        ),
      );
    });
  }

  async channelsWithHeld(): Promise<string[]> {
    return guard('channelsWithHeld', async () => {
      const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: indexKey(), ConsistentRead: true }));
      return Object.keys(result.Item ?? {})
        .filter((name) => name.startsWith(INDEX_PREFIX))
        .map((name) => name.slice(INDEX_PREFIX.length))
        .sort();
    });
  }

  async claimHeld(channel: string, nowMs: number, leaseMs: number): Promise<HeldClaimResult> {
    return guard('claimHeld', async () => {
      const token = `${nowMs}-${Math.random().toString(36).slice(2, 10)}`;
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: heldKey(channel),
            UpdateExpression:
              'SET claim_token = :t, claim_until = :until, claim_since = if_not_exists(claim_since, :now) ADD claim_attempts :one',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(claim_until) OR claim_until < :now)',
            ExpressionAttributeValues: {
              ':t': { S: token },
              ':until': { N: String(nowMs + leaseMs) },
              ':now': { N: String(nowMs) },
              ':one': { N: '1' },
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        const item = result.Attributes ?? {};
        const sinceMs = Number(item['claim_since']?.N ?? nowMs);
        const runs = runsOf(item).filter((run) => run.heldAtMs <= sinceMs);
        return { status: 'claimed', claim: { token, attempt: Number(item['claim_attempts']?.N ?? 1), sinceMs, runs } };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      const existing = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: heldKey(channel), ConsistentRead: true }),
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
      postedEventIds.forEach((id, i) => (names[`#r${i}`] = `${RUN_PREFIX}${id}`));
      const removed = ['claim_token', 'claim_until', 'claim_since', 'claim_attempts', ...Object.keys(names)].join(', ');
      let item: Item | undefined;
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: heldKey(channel),
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
      if (item !== undefined && runsOf(item).length > 0) return;
      await this.dropFromIndex(channel, item?.['version']?.N);
    });
  }

  async releaseHeld(channel: string, token: string): Promise<void> {
    return guard('releaseHeld', () =>
      this.conditional(() =>
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: heldKey(channel),
            // claim_since and claim_attempts stay: the retry covers the same runs and looks in Slack first.
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
          Key: indexKey(),
          UpdateExpression: 'REMOVE #c',
          ...(version === undefined
            ? { ExpressionAttributeNames: { '#c': `${INDEX_PREFIX}${channel}` } }
            : {
                ConditionExpression: 'attribute_not_exists(#c) OR #c <= :v',
                ExpressionAttributeNames: { '#c': `${INDEX_PREFIX}${channel}` },
                ExpressionAttributeValues: { ':v': { N: version } },
              }),
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

function heldKey(channel: string): Item {
  return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.held}${channel}` } };
}

function indexKey(): Item {
  return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.held}${INDEX_SUFFIX}` } };
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

function runValue(run: HeldRun): AttributeValue {
  return {
    M: {
      pid: { S: run.projectId },
      headline: { S: run.headline.slice(0, HEADLINE_CHARS) },
      created: { S: run.createdAt },
      held_at: { N: String(run.heldAtMs) },
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
      },
    ];
  });
}

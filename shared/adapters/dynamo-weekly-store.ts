/**
 * WeeklyStore on the bridge's table.
 *   weeklyset#channels: one attribute per channel (`ch_<channel>`), a JSON WeeklySetting: the sweep
 *     reads every schedule with one GetItem (the digest function has no Scan, which IAM cannot
 *     narrow to a key prefix). About 150 bytes a channel: thousands fit in an item.
 *   weekly#<channel>#<ISO week>: the week's claim: state in_progress | posted, owner, lease_until,
 *     attempts, first_claimed_ms, posted_ts, last_failure, expires_at (kept 5 weeks).
 *   weekly#<channel>#base#<project id>: the baseline the channel's last report left (JSON), kept 8 weeks.
 * Channel ids hold no `#`, so the keys split unambiguously. A connection's claims and baselines are
 * keyed `t#<connection id>#weekly#…` (../tenancy.ts): one report per channel and tenant.
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SUBSCRIPTION_ATTRIBUTES, TABLE } from '../contracts';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';
import type { WeeklyBaseline, WeeklyClaim, WeeklySetting, WeeklyStore } from '../weekly/ports';
import { deadlineBound, finishLease, releaseLease, takeLease, type LeaseTable } from './dynamo-lease';

export interface DynamoWeeklyStoreOptions {
  tableName: string;
  /** Longer than one sweep can run (the digest function's timeout). */
  leaseMs: number;
  /** The invocation's deadline (epoch ms): no call outlives it. */
  deadline?: (() => number) | undefined;
  now?: (() => number) | undefined;
  /** Whose reports: a connection's claims and baselines are keyed under its tenant prefix; the channels' schedules are not (a channel's, not a tenant's). */
  tenant?: Tenant | undefined;
}

const CLAIM_RETENTION_SECONDS = 35 * 24 * 3600;
const BASELINE_RETENTION_SECONDS = 56 * 24 * 3600;
const SETTINGS_KEY = `${TABLE.prefixes.weeklySettings}channels`;
const CHANNEL_ATTRIBUTE = SUBSCRIPTION_ATTRIBUTES.channelPrefix;

type Key = Record<string, AttributeValue>;

function key(pk: string): Key {
  return { [TABLE.partitionKey]: { S: pk } };
}

export function weeklyClaimKey(channel: string, week: string): string {
  return `${TABLE.prefixes.weekly}${channel}#${week}`;
}

function baselineKey(channel: string, projectId: string): string {
  return `${TABLE.prefixes.weekly}${channel}#base#${projectId}`;
}

export class DynamoWeeklyStore implements WeeklyStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: DynamoWeeklyStoreOptions,
  ) {}

  private claimKey(channel: string, week: string): Key {
    return key(tenantKey(this.options.tenant ?? STACK_TENANT, weeklyClaimKey(channel, week)));
  }

  private baselineKey(channel: string, projectId: string): Key {
    return key(tenantKey(this.options.tenant ?? STACK_TENANT, baselineKey(channel, projectId)));
  }

  private bounded(): { abortSignal?: AbortSignal } {
    return deadlineBound(this.options);
  }

  private get lease(): LeaseTable {
    return { client: this.client, tableName: this.options.tableName, bounded: () => this.bounded() };
  }

  async settings(): Promise<Map<string, WeeklySetting>> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: key(SETTINGS_KEY), ConsistentRead: true }),
      this.bounded(),
    );
    const settings = new Map<string, WeeklySetting>();
    for (const [attribute, value] of Object.entries(result.Item ?? {})) {
      if (!attribute.startsWith(CHANNEL_ATTRIBUTE) || value.S === undefined) continue;
      const setting = parseSetting(value.S);
      if (setting !== undefined) settings.set(attribute.slice(CHANNEL_ATTRIBUTE.length), setting);
    }
    return settings;
  }

  async putSetting(channel: string, setting: WeeklySetting): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: key(SETTINGS_KEY),
        UpdateExpression: 'SET #channel = :setting',
        ExpressionAttributeNames: { '#channel': `${CHANNEL_ATTRIBUTE}${channel}` },
        ExpressionAttributeValues: { ':setting': { S: JSON.stringify(setting) } },
      }),
      this.bounded(),
    );
  }

  async claim(channel: string, week: string, nowMs: number): Promise<WeeklyClaim> {
    const outcome = await takeLease(this.lease, this.claimKey(channel, week), nowMs, this.options.leaseMs, CLAIM_RETENTION_SECONDS);
    if (outcome.taken) {
      const { item, token } = outcome;
      return {
        status: 'claimed',
        token,
        attempt: Number(item['attempts']?.N ?? 1),
        firstClaimedMs: Number(item['first_claimed_ms']?.N ?? nowMs),
        postedTs: item['posted_ts']?.S,
      };
    }
    if (outcome.existing?.['state']?.S === 'posted') return { status: 'done', ts: outcome.existing['posted_ts']?.S };
    return { status: 'busy' };
  }

  async recordPosted(channel: string, week: string, token: string, ts: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: this.claimKey(channel, week),
        UpdateExpression: 'SET posted_ts = :ts',
        ConditionExpression: '#owner = :token',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':ts': { S: ts }, ':token': { S: token } },
      }),
      this.bounded(),
    );
  }

  finish(channel: string, week: string, token: string): Promise<void> {
    return finishLease(this.lease, this.claimKey(channel, week), token, 'posted');
  }

  release(channel: string, week: string, token: string, failure: string): Promise<void> {
    return releaseLease(this.lease, this.claimKey(channel, week), token, failure);
  }

  async baseline(channel: string, projectId: string): Promise<WeeklyBaseline | null> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: this.baselineKey(channel, projectId), ConsistentRead: true }),
      this.bounded(),
    );
    const json = result.Item?.['baseline']?.S;
    return json === undefined ? null : (JSON.parse(json) as WeeklyBaseline);
  }

  async putBaseline(channel: string, baseline: WeeklyBaseline): Promise<void> {
    const nowS = Math.floor((this.options.now?.() ?? Date.now()) / 1000);
    await this.client.send(
      new PutItemCommand({
        TableName: this.options.tableName,
        Item: {
          ...this.baselineKey(channel, baseline.projectId),
          baseline: { S: JSON.stringify(baseline) },
          [TABLE.ttlAttribute]: { N: String(nowS + BASELINE_RETENTION_SECONDS) },
        },
      }),
      this.bounded(),
    );
  }
}

/** A stored setting, or undefined for one this version cannot read (it is then ignored, not fatal). */
function parseSetting(json: string): WeeklySetting | undefined {
  try {
    const value = JSON.parse(json) as Partial<WeeklySetting>;
    if (typeof value.enabled !== 'boolean') return undefined;
    const day = typeof value.day === 'number' && value.day >= 1 && value.day <= 7 ? value.day : undefined;
    const minute =
      typeof value.minuteOfDay === 'number' && value.minuteOfDay >= 0 && value.minuteOfDay < 1440 ? value.minuteOfDay : undefined;
    return {
      enabled: value.enabled,
      day,
      minuteOfDay: minute,
      timeZone: typeof value.timeZone === 'string' ? value.timeZone : undefined,
      changedBy: typeof value.changedBy === 'string' ? value.changedBy : '',
      changedAtMs: typeof value.changedAtMs === 'number' ? value.changedAtMs : 0,
    };
  } catch {
    return undefined;
  }
}

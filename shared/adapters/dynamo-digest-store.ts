/**
 * DigestStore on the bridge's DynamoDB table.
 *   digest#<event id>: state in_progress | posted | skipped, owner, lease_until (ms), channel, main_ts,
 *     replies_posted, attempts, first_claimed_ms, expires_at (TTL; longer than the DLQ retention so a replay is still recognised).
 *   post#<channel>#<event id>: the same fields for one channel of the event's fan-out (its own claim
 *     and progress, so a failure in one channel never re-posts to another).
 *   snapshot#<project id>: newest_run_ms (high-water mark of runs taken up), last_created_ms and the
 *     snapshot as JSON of the last digest posted.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { channelPostKey, TABLE } from '../contracts';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';
import type { DigestClaim, DigestStore, PostingProgress } from '../ports';
import type { ProjectSnapshot } from '../digest/snapshot';
import { deadlineBound, finishLease, releaseLease, takeLease, type LeaseTable } from './dynamo-lease';

export interface DynamoDigestStoreOptions {
  tableName: string;
  /** Longer than the digest function's timeout, so a live invocation is never overtaken. */
  leaseMs: number;
  retentionSeconds: number;
  /** The invocation's deadline (epoch ms): no call outlives it, so the batch response is always sent. */
  deadline?: (() => number) | undefined;
  now?: (() => number) | undefined;
  /** Whose digests: a connection's claims and snapshots are keyed under its tenant prefix (../tenancy.ts). */
  tenant?: Tenant | undefined;
}

/** DLQ retention is 14 days; claims outlive it so a replayed message still finds its record. */
export const DIGEST_RETENTION_SECONDS = 15 * 24 * 3600;

export class DynamoDigestStore implements DigestStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: DynamoDigestStoreOptions,
  ) {}

  /** Bounds a call by the invocation's deadline (besides the client's own request timeout). */
  private bounded(): { abortSignal?: AbortSignal } {
    return deadlineBound(this.options);
  }

  private get lease(): LeaseTable {
    return { client: this.client, tableName: this.options.tableName, bounded: () => this.bounded() };
  }

  private tenantKey(key: string): string {
    return tenantKey(this.options.tenant ?? STACK_TENANT, key);
  }

  private claimKey(eventId: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: this.tenantKey(`${TABLE.prefixes.digest}${eventId}`) } };
  }

  private channelClaimKey(eventId: string, channel: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: this.tenantKey(channelPostKey(channel, eventId)) } };
  }

  claim(eventId: string, nowMs: number): Promise<DigestClaim> {
    return this.claimAt(this.claimKey(eventId), nowMs);
  }

  recordProgress(eventId: string, token: string, progress: PostingProgress): Promise<void> {
    return this.progressAt(this.claimKey(eventId), token, progress);
  }

  finish(eventId: string, token: string, outcome: 'posted' | 'skipped'): Promise<void> {
    return this.finishAt(this.claimKey(eventId), token, outcome);
  }

  release(eventId: string, token: string, failure?: string): Promise<void> {
    return this.releaseAt(this.claimKey(eventId), token, failure);
  }

  claimChannel(eventId: string, channel: string, nowMs: number): Promise<DigestClaim> {
    return this.claimAt(this.channelClaimKey(eventId, channel), nowMs);
  }

  recordChannelProgress(eventId: string, channel: string, token: string, progress: PostingProgress): Promise<void> {
    return this.progressAt(this.channelClaimKey(eventId, channel), token, progress);
  }

  finishChannel(eventId: string, channel: string, token: string): Promise<void> {
    return this.finishAt(this.channelClaimKey(eventId, channel), token, 'posted');
  }

  releaseChannel(eventId: string, channel: string, token: string, failure?: string): Promise<void> {
    return this.releaseAt(this.channelClaimKey(eventId, channel), token, failure);
  }

  private snapshotKey(projectId: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: this.tenantKey(`${TABLE.prefixes.snapshot}${projectId}`) } };
  }

  private async claimAt(key: Record<string, AttributeValue>, nowMs: number): Promise<DigestClaim> {
    const outcome = await takeLease(this.lease, key, nowMs, this.options.leaseMs, this.options.retentionSeconds);
    if (outcome.taken) {
      const { item, token } = outcome;
      const progress: PostingProgress = { repliesPosted: Number(item['replies_posted']?.N ?? 0) };
      if (item['channel']?.S) progress.channel = item['channel'].S;
      if (item['main_ts']?.S) progress.mainTs = item['main_ts'].S;
      return {
        status: 'claimed',
        token,
        progress,
        attempt: Number(item['attempts']?.N ?? 1),
        firstClaimedMs: Number(item['first_claimed_ms']?.N ?? nowMs),
      };
    }
    const state = outcome.existing?.['state']?.S;
    if (state === 'posted' || state === 'skipped') return { status: 'done', outcome: state, mainTs: outcome.existing?.['main_ts']?.S };
    const leaseUntil = Number(outcome.existing?.['lease_until']?.N ?? nowMs);
    return { status: 'busy', retryAfterSeconds: Math.max(1, Math.ceil((leaseUntil - nowMs) / 1000)) };
  }

  private async progressAt(key: Record<string, AttributeValue>, token: string, progress: PostingProgress): Promise<void> {
    const names: Record<string, string> = { '#owner': 'owner' };
    const values: Record<string, AttributeValue> = { ':token': { S: token }, ':replies': { N: String(progress.repliesPosted) } };
    const sets = ['replies_posted = :replies'];
    if (progress.channel) {
      sets.push('channel = :channel');
      values[':channel'] = { S: progress.channel };
    }
    if (progress.mainTs) {
      sets.push('main_ts = :main_ts');
      values[':main_ts'] = { S: progress.mainTs };
    }
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: '#owner = :token',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
      this.bounded(),
    );
  }

  private finishAt(key: Record<string, AttributeValue>, token: string, outcome: 'posted' | 'skipped'): Promise<void> {
    return finishLease(this.lease, key, token, outcome);
  }

  private releaseAt(key: Record<string, AttributeValue>, token: string, failure?: string): Promise<void> {
    return releaseLease(this.lease, key, token, failure);
  }

  async getSnapshot(projectId: string): Promise<ProjectSnapshot | null> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: this.snapshotKey(projectId), ConsistentRead: true }),
      this.bounded(),
    );
    const json = result.Item?.['snapshot']?.S;
    if (!json) return null;
    return JSON.parse(json) as ProjectSnapshot;
  }

  async markNewestRun(projectId: string, createdAtMs: number, eventId: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: this.snapshotKey(projectId),
          // Equal times: only the event that holds the mark keeps it (its own retry), so two runs with
          // the same created_at produce one digest.
          UpdateExpression: 'SET newest_run_ms = :ms, newest_run_event = :event',
          ConditionExpression:
            'attribute_not_exists(newest_run_ms) OR newest_run_ms < :ms OR (newest_run_ms = :ms AND newest_run_event = :event)',
          ExpressionAttributeValues: { ':ms': { N: String(createdAtMs) }, ':event': { S: eventId } },
        }),
        this.bounded(),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async putSnapshot(snapshot: ProjectSnapshot): Promise<void> {
    const createdMs = String(Date.parse(snapshot.lastCreatedAt));
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: this.snapshotKey(snapshot.projectId),
          // An update, not a put: the item also holds newest_run_ms. Compared as epoch ms: ISO
          // strings with and without fractional seconds don't sort as text.
          UpdateExpression: 'SET last_created_ms = :created, #snapshot = :snapshot',
          ConditionExpression: 'attribute_not_exists(last_created_ms) OR last_created_ms <= :created',
          ExpressionAttributeNames: { '#snapshot': 'snapshot' },
          ExpressionAttributeValues: { ':created': { N: createdMs }, ':snapshot': { S: JSON.stringify(snapshot) } },
        }),
        this.bounded(),
      );
    } catch (error) {
      // A newer digest of the project stored its snapshot first; keep the newer one.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/**
 * DigestStore on the bridge's DynamoDB table.
 *   digest#<event id>: state in_progress | posted | skipped, owner, lease_until (ms), channel, main_ts,
 *     replies_posted, attempts, first_claimed_ms, expires_at (TTL; longer than the DLQ retention so a replay is still recognised).
 *   post#<channel>#<event id>: the same fields for one channel of the event's fan-out (its own claim
 *     and progress, so a failure in one channel never re-posts to another).
 *   snapshot#<project id>: newest_run_ms (high-water mark of runs taken up), last_created_ms and the
 *     snapshot as JSON of the last digest posted.
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { channelPostKey, TABLE } from '../contracts';
import type { DigestClaim, DigestStore, PostingProgress } from '../ports';
import type { ProjectSnapshot } from '../digest/snapshot';

/** A failure text longer than this is cut: it is for a person reading `bridge dlq peek`. */
const MAX_FAILURE_CHARS = 500;

export interface DynamoDigestStoreOptions {
  tableName: string;
  /** Longer than the digest function's timeout, so a live invocation is never overtaken. */
  leaseMs: number;
  retentionSeconds: number;
  /** The invocation's deadline (epoch ms): no call outlives it, so the batch response is always sent. */
  deadline?: (() => number) | undefined;
  now?: (() => number) | undefined;
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
    const deadline = this.options.deadline?.() ?? Number.POSITIVE_INFINITY;
    if (!Number.isFinite(deadline)) return {};
    const now = this.options.now?.() ?? Date.now();
    return { abortSignal: AbortSignal.timeout(Math.max(1, deadline - now)) };
  }

  private claimKey(eventId: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.digest}${eventId}` } };
  }

  private channelClaimKey(eventId: string, channel: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: channelPostKey(channel, eventId) } };
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
    return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.snapshot}${projectId}` } };
  }

  private async claimAt(key: Record<string, AttributeValue>, nowMs: number): Promise<DigestClaim> {
    const token = randomUUID();
    try {
      // Creates the record, or takes over one whose holder's lease ended (keeping its progress).
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: key,
          UpdateExpression: `SET #state = :in_progress, #owner = :token, lease_until = :lease, ${TABLE.ttlAttribute} = if_not_exists(${TABLE.ttlAttribute}, :expires), first_claimed_ms = if_not_exists(first_claimed_ms, :now) ADD attempts :one`,
          ConditionExpression: `attribute_not_exists(${TABLE.partitionKey}) OR (#state = :in_progress AND lease_until < :now)`,
          ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':in_progress': { S: 'in_progress' },
            ':token': { S: token },
            ':lease': { N: String(nowMs + this.options.leaseMs) },
            ':now': { N: String(nowMs) },
            ':expires': { N: String(Math.floor(nowMs / 1000) + this.options.retentionSeconds) },
            ':one': { N: '1' },
          },
          ReturnValues: 'ALL_NEW',
        }),
        this.bounded(),
      );
      const item = result.Attributes ?? {};
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
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const existing = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: key, ConsistentRead: true }),
      this.bounded(),
    );
    const state = existing.Item?.['state']?.S;
    if (state === 'posted' || state === 'skipped') return { status: 'done', outcome: state, mainTs: existing.Item?.['main_ts']?.S };
    const leaseUntil = Number(existing.Item?.['lease_until']?.N ?? nowMs);
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

  private async finishAt(key: Record<string, AttributeValue>, token: string, outcome: 'posted' | 'skipped'): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: key,
        UpdateExpression: 'SET #state = :outcome REMOVE lease_until',
        ConditionExpression: '#owner = :token',
        ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
        ExpressionAttributeValues: { ':outcome': { S: outcome }, ':token': { S: token } },
      }),
      this.bounded(),
    );
  }

  private async releaseAt(key: Record<string, AttributeValue>, token: string, failure?: string): Promise<void> {
    // The failure is kept on the claim so `bridge dlq peek` can say why the message failed.
    const failureUpdate = failure === undefined ? '' : `, ${TABLE.lastFailureAttribute} = :failure`;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: key,
          UpdateExpression: `SET lease_until = :zero${failureUpdate}`,
          ConditionExpression: '#owner = :token AND #state = :in_progress',
          ExpressionAttributeNames: { '#owner': 'owner', '#state': 'state' },
          ExpressionAttributeValues: {
            ':zero': { N: '0' },
            ':token': { S: token },
            ':in_progress': { S: 'in_progress' },
            ...(failure === undefined ? {} : { ':failure': { S: failure.slice(0, MAX_FAILURE_CHARS) } }),
          },
        }),
        this.bounded(),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
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

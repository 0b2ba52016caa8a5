/**
 * ChannelPacer on the bridge's table: `pace#<channel id>` holds `tat_ms`, the channel's GCRA
 * theoretical arrival time (see shared/pacing.ts). A reservation is a read and one
 * conditional write on the value read; a lost race re-reads and tries again, a few times.
 * `expires_at` lets TTL drop channels that went quiet.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { SLACK_APP_DEFAULTS, TABLE } from '../contracts';
import { SlackAppStoreError } from '../errors';
import { nextSlotWaitMs, reserveSlot, type PaceParams } from '../pacing';
import type { ChannelPacer, PaceDecision, SlotRequest } from '../ports';

export interface DynamoChannelPacerOptions {
  tableName: string;
  params?: PaceParams | undefined;
  /** Conditional-write attempts before giving up on a busy channel (then: deferred by one interval). */
  maxAttempts?: number | undefined;
  /**
   * The time at each attempt. A reservation that lost races has spent time: computing its slot from
   * the time it was asked would set the channel's TAT in the past, and let the next post come too soon.
   */
  clock?: (() => number) | undefined;
}

const PACE_RETENTION_SECONDS = 24 * 3600;
const DEFAULT_ATTEMPTS = 8;

export class DynamoChannelPacer implements ChannelPacer {
  private readonly params: PaceParams;
  private readonly maxAttempts: number;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: DynamoChannelPacerOptions,
  ) {
    this.params = options.params ?? { intervalMs: SLACK_APP_DEFAULTS.paceIntervalMs, burst: SLACK_APP_DEFAULTS.paceBurst };
    this.maxAttempts = options.maxAttempts ?? DEFAULT_ATTEMPTS;
  }

  get intervalMs(): number {
    return this.params.intervalMs;
  }

  async reserve(channel: string, nowMs: number, maxWaitMs: number, request: SlotRequest = {}): Promise<PaceDecision> {
    try {
      for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
        const stored = await this.readTat(channel);
        const step = reserveSlot(stored, this.attemptNow(nowMs), maxWaitMs, this.params, request);
        if (step.nextTatMs === undefined) return step.decision;
        if (await this.writeTat(channel, stored, step.nextTatMs)) return step.decision;
      }
    } catch (error) {
      throw new SlackAppStoreError('channel pacer reserve', { cause: error });
    }
    // Many writers on one channel: let this one come back after a slot's time.
    return { status: 'deferred', retryAfterMs: this.params.intervalMs };
  }

  async peek(channel: string, nowMs: number): Promise<number> {
    try {
      return nextSlotWaitMs(await this.readTat(channel), this.attemptNow(nowMs), this.params);
    } catch (error) {
      throw new SlackAppStoreError('channel pacer peek', { cause: error });
    }
  }

  private attemptNow(askedAtMs: number): number {
    return this.options.clock ? Math.max(askedAtMs, this.options.clock()) : askedAtMs;
  }

  private key(channel: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.pace}${channel}` } };
  }

  private async readTat(channel: string): Promise<number | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: this.key(channel), ConsistentRead: true }),
    );
    const tat = result.Item?.['tat_ms']?.N;
    return tat === undefined ? undefined : Number(tat);
  }

  /** Writes the new TAT only if the stored one is still what was read; false when another writer got there first. */
  private async writeTat(channel: string, expected: number | undefined, nextTatMs: number): Promise<boolean> {
    const values: Record<string, AttributeValue> = {
      ':next': { N: String(nextTatMs) },
      ':expires': { N: String(Math.floor(nextTatMs / 1000) + PACE_RETENTION_SECONDS) },
    };
    if (expected !== undefined) values[':expected'] = { N: String(expected) };
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: this.key(channel),
          UpdateExpression: 'SET tat_ms = :next, expires_at = :expires',
          ConditionExpression: expected === undefined ? 'attribute_not_exists(tat_ms)' : 'tat_ms = :expected',
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

/**
 * ConnectionStore on the bridge's one table (pk only):
 *   conn#<id>      a connection's non-secret fields: base_url, secret_name, default_channel,
 *                  project_channels (map project → channel id), slack_teams (list of the linked
 *                  installations' team or org ids; absent = none), status, created_at, removed_at, and its
 *                  cadence (run_times: its latest run times, written under the counter run_version;
 *                  silence_told_after). A removed connection stays as a tombstone (its webhook answers
 *                  410) until `expires_at`.
 *   conn#~index    every connection's id: one attribute `c_<id>` each (ids hold no `~`), so a list
 *                  reads two items, never a scan.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import type { Connection, ConnectionStatus } from '../connections/model';
import { RUN_TIMES_KEPT, type ConnectionRecord, type ConnectionStore } from '../connections/ports';
import { batchGetAll } from './dynamo-batch-get';

type Item = Record<string, AttributeValue>;

const INDEX_KEY: Item = { [TABLE.partitionKey]: { S: `${TABLE.prefixes.connection}~index` } };
const INDEX_PREFIX = 'c_';
/** A removed connection's tombstone is kept this long (410 to its webhook), then it is unknown (404). */
const TOMBSTONE_SECONDS = 90 * 24 * 3600;
/** Concurrent digests of one connection noting runs retry this often; a lost note only makes the cadence coarser. */
const NOTE_ATTEMPTS = 3;

function keyOf(id: string): Item {
  return { [TABLE.partitionKey]: { S: `${TABLE.prefixes.connection}${id}` } };
}

export class DynamoConnectionStore implements ConnectionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async get(id: string): Promise<ConnectionRecord | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: keyOf(id), ConsistentRead: true }));
    return result.Item === undefined ? undefined : recordOf(result.Item);
  }

  async list(): Promise<ConnectionRecord[]> {
    const index = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: INDEX_KEY, ConsistentRead: true }));
    const ids = Object.keys(index.Item ?? {})
      .filter((name) => name.startsWith(INDEX_PREFIX))
      .map((name) => name.slice(INDEX_PREFIX.length));
    const items = await batchGetAll(this.client, this.tableName, ids.map(keyOf), 'connection');
    return items
      .map(recordOf)
      .filter((record): record is ConnectionRecord => record !== undefined)
      .sort((a, b) => a.connection.id.localeCompare(b.connection.id));
  }

  async add(connection: Connection): Promise<'added' | 'exists'> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: itemOf(connection),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'exists';
      throw error;
    }
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: INDEX_KEY,
        UpdateExpression: 'SET #c = :at',
        ExpressionAttributeNames: { '#c': `${INDEX_PREFIX}${connection.id}` },
        ExpressionAttributeValues: { ':at': { N: String(connection.createdAtMs) } },
      }),
    );
    return 'added';
  }

  /** Writes a listed connection's fields whole, its cadence starting again (the local stack re-creates its clients' connections). */
  async put(connection: Connection): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: itemOf(connection) }));
  }

  async markRemoved(id: string, atMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(id),
          UpdateExpression: 'SET #status = :removed, removed_at = :at, #ttl = :expires',
          ConditionExpression: '#status = :active',
          ExpressionAttributeNames: { '#status': 'status', '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: {
            ':removed': { S: 'removed' },
            ':active': { S: 'active' },
            ':at': { N: String(atMs) },
            ':expires': { N: String(Math.floor(atMs / 1000) + TOMBSTONE_SECONDS) },
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async setSlackTeams(id: string, teamIds: readonly string[]): Promise<boolean> {
    const values: Item = { ':active': { S: 'active' } };
    if (teamIds.length > 0) values[':teams'] = { L: teamIds.map((team) => ({ S: team })) };
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(id),
          UpdateExpression: teamIds.length > 0 ? 'SET slack_teams = :teams' : 'REMOVE slack_teams',
          ConditionExpression: '#status = :active',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async noteRun(id: string, atMs: number): Promise<void> {
    for (let attempt = 0; attempt < NOTE_ATTEMPTS; attempt++) {
      const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: keyOf(id), ConsistentRead: true }));
      const record = result.Item === undefined ? undefined : recordOf(result.Item);
      if (record === undefined || record.connection.status !== 'active') return;
      const old = record.cadence.runTimesMs;
      if (old.includes(atMs)) return;
      const next = [...old, atMs].sort((a, b) => a - b).slice(-RUN_TIMES_KEPT);
      // Conditional on the version read: a list can't be compared in a condition, a counter can.
      const version = result.Item?.['run_version']?.N;
      try {
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: keyOf(id),
            UpdateExpression: 'SET run_times = :next, run_version = :version',
            ConditionExpression: version === undefined ? 'attribute_not_exists(run_version)' : 'run_version = :read',
            ExpressionAttributeValues: {
              ':next': { L: next.map((t) => ({ N: String(t) })) },
              ':version': { N: String(Number(version ?? 0) + 1) },
              ...(version === undefined ? {} : { ':read': { N: version } }),
            },
          }),
        );
        return;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
  }

  async markSilenceTold(id: string, lastRunMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(id),
          UpdateExpression: 'SET silence_told_after = :last',
          ConditionExpression: 'attribute_exists(#pk) AND (attribute_not_exists(silence_told_after) OR silence_told_after < :last)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
          ExpressionAttributeValues: { ':last': { N: String(lastRunMs) } },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

function itemOf(connection: Connection): Item {
  const projects: Item = {};
  for (const [project, channel] of Object.entries(connection.routes.byProject)) projects[project] = { S: channel };
  return {
    ...keyOf(connection.id),
    id: { S: connection.id },
    base_url: { S: connection.baseUrl },
    secret_name: { S: connection.secretName },
    default_channel: { S: connection.routes.defaultChannel },
    project_channels: { M: projects },
    ...(connection.slackTeamIds.length === 0 ? {} : { slack_teams: { L: connection.slackTeamIds.map((id) => ({ S: id })) } }),
    status: { S: connection.status },
    created_at: { N: String(connection.createdAtMs) },
  };
}

function recordOf(item: Item): ConnectionRecord | undefined {
  const id = item['id']?.S;
  const baseUrl = item['base_url']?.S;
  const secretName = item['secret_name']?.S;
  const defaultChannel = item['default_channel']?.S;
  const status = item['status']?.S;
  if (id === undefined || baseUrl === undefined || secretName === undefined || defaultChannel === undefined) return undefined;
  if (status !== 'active' && status !== 'removed') return undefined;
  const byProject: Record<string, string> = {};
  for (const [project, value] of Object.entries(item['project_channels']?.M ?? {})) if (value.S !== undefined) byProject[project] = value.S;
  const removedAt = item['removed_at']?.N;
  const silenceTold = item['silence_told_after']?.N;
  return {
    connection: {
      id,
      baseUrl,
      secretName,
      routes: { defaultChannel, byProject },
      slackTeamIds: (item['slack_teams']?.L ?? []).flatMap((value) => (value.S === undefined ? [] : [value.S])),
      status: status satisfies ConnectionStatus,
      createdAtMs: Number(item['created_at']?.N ?? 0),
      removedAtMs: removedAt === undefined ? undefined : Number(removedAt),
    },
    cadence: {
      runTimesMs: (item['run_times']?.L ?? []).map((value) => Number(value.N)).filter((n) => Number.isFinite(n)),
      silenceToldAfterMs: silenceTold === undefined ? undefined : Number(silenceTold),
    },
  };
}

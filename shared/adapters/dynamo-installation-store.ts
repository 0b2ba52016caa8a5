/**
 * InstallationStore and RefreshLease on the bridge's table.
 *   inst#<enterprise or team id>: one installation (shared/installations/model.ts): ids, scopes, who
 *     installed it, and the bot token with its refresh token and expiry. The table is encrypted at rest
 *     (DynamoDB's default encryption); the tokens are never logged.
 *   instlease#<id>: the lease of the installation's token refresh (./dynamo-lease.ts), released after
 *     every refresh so the next one can take it.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  ConditionalCheckFailedException,
} from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import type { BotToken, Installation } from '../installations/model';
import type { InstallationStore, RefreshLease } from '../installations/ports';
import { releaseLease, takeLease, type LeaseTable } from './dynamo-lease';

type Item = Record<string, AttributeValue>;

export interface DynamoInstallationStoreOptions {
  tableName: string;
}

export interface DynamoRefreshLeaseOptions {
  tableName: string;
  /** Longer than one refresh call can take (its request timeout), so a live holder is never taken over. */
  leaseMs: number;
}

/** The lease item outlives any refresh by far; it is recreated after its TTL. */
const LEASE_RETENTION_SECONDS = 30 * 24 * 3600;

function key(prefix: string, id: string): Item {
  return { [TABLE.partitionKey]: { S: `${prefix}${id}` } };
}

export class DynamoInstallationStore implements InstallationStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: DynamoInstallationStoreOptions,
  ) {}

  async save(installation: Installation): Promise<void> {
    const id = installation.isEnterpriseInstall ? installation.enterpriseId : installation.teamId;
    if (id === undefined) throw new Error('an installation needs its team id, or its enterprise id when org-wide');
    await this.client.send(
      new PutItemCommand({ TableName: this.options.tableName, Item: { ...key(TABLE.prefixes.installation, id), ...toItem(installation) } }),
    );
  }

  async get(id: string): Promise<Installation | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: key(TABLE.prefixes.installation, id), ConsistentRead: true }),
    );
    return result.Item ? fromItem(result.Item) : undefined;
  }

  async replaceBotToken(id: string, usedRefreshToken: string, next: BotToken): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: key(TABLE.prefixes.installation, id),
          UpdateExpression: 'SET bot_token = :token, bot_refresh_token = :refresh, bot_expires_at_ms = :expires',
          ConditionExpression: 'bot_refresh_token = :used',
          ExpressionAttributeValues: {
            ':token': { S: next.token },
            ':refresh': { S: next.refreshToken ?? usedRefreshToken },
            ':expires': { N: String(next.expiresAtMs ?? 0) },
            ':used': { S: usedRefreshToken },
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.client.send(
      new DeleteItemCommand({ TableName: this.options.tableName, Key: key(TABLE.prefixes.installation, id), ReturnValues: 'ALL_OLD' }),
    );
    return result.Attributes !== undefined;
  }
}

export class DynamoRefreshLease implements RefreshLease {
  private readonly table: LeaseTable;

  constructor(
    client: DynamoDBClient,
    private readonly options: DynamoRefreshLeaseOptions,
  ) {
    this.table = { client, tableName: options.tableName, bounded: () => ({}) };
  }

  async take(id: string, nowMs: number): Promise<string | undefined> {
    const outcome = await takeLease(
      this.table,
      key(TABLE.prefixes.installationLease, id),
      nowMs,
      this.options.leaseMs,
      LEASE_RETENTION_SECONDS,
    );
    return outcome.taken ? outcome.token : undefined;
  }

  async release(id: string, holder: string): Promise<void> {
    await releaseLease(this.table, key(TABLE.prefixes.installationLease, id), holder);
  }
}

function toItem(installation: Installation): Item {
  const item: Item = {
    is_enterprise_install: { BOOL: installation.isEnterpriseInstall },
    bot_user_id: { S: installation.botUserId },
    bot_id: { S: installation.botId },
    scopes: { S: installation.scopes.join(',') },
    bot_token: { S: installation.bot.token },
    installed_by: { S: installation.installedBy },
    installed_at_ms: { N: String(installation.installedAtMs) },
  };
  const optional: [string, string | undefined][] = [
    ['team_id', installation.teamId],
    ['team_name', installation.teamName],
    ['enterprise_id', installation.enterpriseId],
    ['enterprise_name', installation.enterpriseName],
    ['app_id', installation.appId],
    ['bot_refresh_token', installation.bot.refreshToken],
  ];
  for (const [name, value] of optional) if (value !== undefined) item[name] = { S: value };
  if (installation.bot.expiresAtMs !== undefined) item['bot_expires_at_ms'] = { N: String(installation.bot.expiresAtMs) };
  return item;
}

function fromItem(item: Item): Installation {
  const text = (name: string): string | undefined => item[name]?.S;
  const expires = item['bot_expires_at_ms']?.N;
  return {
    teamId: text('team_id'),
    teamName: text('team_name'),
    enterpriseId: text('enterprise_id'),
    enterpriseName: text('enterprise_name'),
    isEnterpriseInstall: item['is_enterprise_install']?.BOOL === true,
    appId: text('app_id'),
    botUserId: text('bot_user_id') ?? '',
    botId: text('bot_id') ?? '',
    scopes: (text('scopes') ?? '').split(',').filter((s) => s !== ''),
    bot: {
      token: text('bot_token') ?? '',
      refreshToken: text('bot_refresh_token'),
      expiresAtMs: expires === undefined ? undefined : Number(expires),
    },
    installedBy: text('installed_by') ?? '',
    installedAtMs: Number(item['installed_at_ms']?.N ?? 0),
  };
}

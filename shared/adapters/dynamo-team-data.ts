/**
 * TeamData on the bridge's table: `team#<team id>` lists the channels a Slack workspace set something up
 * in through `/visibility` (one attribute `ch_<channel>` each, noted beside every command it runs there),
 * and its purge removes, channel by channel, what the table keeps for them:
 *   sub#<project> / chan#<channel>  the channel's subscriptions (with their filters and settings);
 *   audit#<channel>                 its change log;
 *   quiet#<channel>                 its quiet hours; held#<channel> and its `held#~index` entry, the digests held;
 *   weeklyset#channels              its weekly-report schedule.
 * The items of a connection's tenant (all but `quiet#` and `weeklyset#`, which are the channel's) are keyed
 * `t#<connection id>#…`: each tenant's are purged.
 * Each channel leaves the team's item only once its purge is done, so a purge that failed halfway is
 * finished by the next (Slack's other uninstall event, or ops); every step deletes or removes, so a repeat
 * finds nothing. A channel set up before teams were noted is in no team's item: it is not purged.
 * Channel ids hold no `#`.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { SUBSCRIPTION_ATTRIBUTES, TABLE } from '../contracts';
import type { TeamChannels, TeamData } from '../installations/ports';
import type { SubscriptionStore } from '../ports';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';

type Key = Record<string, AttributeValue>;

const CHANNEL_PREFIX = SUBSCRIPTION_ATTRIBUTES.channelPrefix;
/** The held-digests index's due time of a channel (shared/adapters/dynamo-quiet-hours.ts). */
const HELD_DUE_PREFIX = 'due_';
const HELD_INDEX = `${TABLE.prefixes.held}~index`;
const WEEKLY_SETTINGS = `${TABLE.prefixes.weeklySettings}channels`;

function key(pk: string): Key {
  return { [TABLE.partitionKey]: { S: pk } };
}

export class DynamoTeamData implements TeamData, TeamChannels {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** A tenant's subscriptions (each tenant's are keyed under its prefix, ../tenancy.ts). */
    private readonly subscriptionsOf: (tenant: Tenant) => Pick<SubscriptionStore, 'forChannel' | 'unsubscribe'>,
    /**
     * Every tenant whose items a channel may hold: the stack's and every connection's, removed ones
     * included (a link may have changed since the channel was set up, so the purge does not trust it).
     */
    private readonly tenants: () => Promise<readonly Tenant[]> = () => Promise.resolve([STACK_TENANT]),
  ) {}

  async note(teamId: string, channel: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(`${TABLE.prefixes.team}${teamId}`),
        UpdateExpression: 'SET #c = :one',
        ExpressionAttributeNames: { '#c': `${CHANNEL_PREFIX}${channel}` },
        ExpressionAttributeValues: { ':one': { N: '1' } },
      }),
    );
  }

  async purge(teamId: string): Promise<string[]> {
    const team = key(`${TABLE.prefixes.team}${teamId}`);
    const found = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: team, ConsistentRead: true }));
    const channels = Object.keys(found.Item ?? {})
      .filter((name) => name.startsWith(CHANNEL_PREFIX))
      .map((name) => name.slice(CHANNEL_PREFIX.length));
    for (const channel of channels) {
      await this.purgeChannel(channel);
      await this.remove(team, [`${CHANNEL_PREFIX}${channel}`]);
    }
    if (found.Item !== undefined) await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: team }));
    return channels;
  }

  /**
   * The table's routes of a team are its subscriptions, which `purge` removed. The operator's routes (the
   * stage file's, connections') belong to no workspace: Slack refuses a post into a channel of a removed
   * workspace, and the digest handles it as a refused channel. So there is nothing left to mark.
   */
  markRoutesBroken(): Promise<number> {
    return Promise.resolve(0);
  }

  private async purgeChannel(channel: string): Promise<void> {
    for (const tenant of await this.tenants()) await this.purgeTenantChannel(tenant, channel);
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: key(`${TABLE.prefixes.quiet}${channel}`) }));
    await this.remove(key(WEEKLY_SETTINGS), [`${CHANNEL_PREFIX}${channel}`]);
  }

  /** What one tenant keeps for the channel: its subscriptions and their index, change log and held digests. */
  private async purgeTenantChannel(tenant: Tenant, channel: string): Promise<void> {
    const subscriptions = this.subscriptionsOf(tenant);
    for (const subscription of await subscriptions.forChannel(channel)) await subscriptions.unsubscribe(subscription.projectId, channel);
    for (const prefix of [TABLE.prefixes.subscriptionsOfChannel, TABLE.prefixes.audit, TABLE.prefixes.held])
      await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: key(tenantKey(tenant, `${prefix}${channel}`)) }));
    await this.remove(key(tenantKey(tenant, HELD_INDEX)), [`${CHANNEL_PREFIX}${channel}`, `${HELD_DUE_PREFIX}${channel}`]);
  }

  /** Removes attributes of an item; nothing when the item or they are absent (an update would create the item: it must exist). */
  private async remove(itemKey: Key, attributes: string[]): Promise<void> {
    const names = Object.fromEntries(attributes.map((name, i) => [`#a${i}`, name]));
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey,
          UpdateExpression: `REMOVE ${Object.keys(names).join(', ')}`,
          ConditionExpression: `attribute_exists(${TABLE.partitionKey})`,
          ExpressionAttributeNames: names,
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

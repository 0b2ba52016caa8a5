/**
 * SubscriptionStore on the bridge's one table (pk only, no GSI, no transactions — dynalite has none):
 *   sub#<project id>   the routing source of truth: one map attribute `ch_<channel>` per subscribed
 *                      channel {project_name, mode, muted_until?, created_by, created_at, changed_by,
 *                      changed_at, last_change, broken_code?, broken_at?}; settings changes are one
 *                      conditional update here. A broken entry (Slack refused posts there) is
 *                      skipped by routing and replaced by the next subscribe.
 *   chan#<channel id>  the index for `list`: one attribute `pr_<project id>` {project_name, subscribed_at}.
 *   audit#<channel id> the channel's recent changes: a list `entries` of {who, at, what, pid, pname},
 *                      oldest first. Appending is one conditional write (list_append, which returns
 *                      the new size); past AUDIT_KEPT a second conditional write drops the oldest
 *                      entry. No read-modify-write: two appenders can't overwrite each other, and a
 *                      trim removes one entry only while the list is over the kept size.
 * Invariant (by write order): a `sub#` entry always has its `chan#` index entry. Subscribe writes the
 * index first; unsubscribe removes the entry first. A crash in between leaves only an index entry,
 * which `forChannel` ignores because it reads the `sub#` entries themselves.
 * Size: an item holds 400 KB, about 2,000 channels per project or 4,000 projects per channel.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { SUBSCRIPTION_ATTRIBUTES, TABLE, type DigestMode } from '../contracts';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';
import { batchGetAll } from './dynamo-batch-get';
import { storeGuard } from './store-guard';
import {
  AUDIT_KEPT,
  type Actor,
  type AlertLevel,
  type ChannelFilter,
  type AuditEntry,
  type NewSubscription,
  type SettingsChange,
  type SubscribeResult,
  type Subscription,
  type SubscriptionStore,
} from '../ports';

type Item = Record<string, AttributeValue>;

/** A project name in an audit entry is cut to this (the list stays far below the 400 KB item limit). */
const AUDIT_NAME_CHARS = 300;
/** Append, and trim when full, at most this many times under contention before giving up. */
const AUDIT_ROUNDS = 5;
/** Concurrent appends may run ahead of their trims up to this size; readers show the newest AUDIT_KEPT. */
const AUDIT_STORED = AUDIT_KEPT + 20;

export class DynamoSubscriptionStore implements SubscriptionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** The mode of a new subscription that names none; the composition roots pass the stage's `subscriptionDefaultMode`. */
    private readonly defaultMode: DigestMode = 'full',
    /** Whose subscriptions these are: a connection's are keyed under its tenant prefix (../tenancy.ts). */
    private readonly tenant: Tenant = STACK_TENANT,
  ) {}

  private projectKey(projectId: string): Item {
    return pk(tenantKey(this.tenant, `${TABLE.prefixes.subscriptionsOfProject}${projectId}`));
  }

  private channelKey(channel: string): Item {
    return pk(tenantKey(this.tenant, `${TABLE.prefixes.subscriptionsOfChannel}${channel}`));
  }

  private auditKey(channel: string): Item {
    return pk(tenantKey(this.tenant, `${TABLE.prefixes.audit}${channel}`));
  }

  async subscribe(input: NewSubscription): Promise<SubscribeResult> {
    return guard('subscribe', async () => {
      await this.update(
        this.channelKey(input.channel),
        'SET #p = :entry',
        { '#p': projectAttr(input.projectId) },
        { ':entry': indexEntry(input) },
      );
      const subscription = newSubscription({ ...input, mode: input.mode ?? this.defaultMode });
      try {
        await this.update(
          this.projectKey(input.projectId),
          'SET #c = :entry, project_id = :pid',
          { '#c': channelAttr(input.channel) },
          { ':entry': entryValue(subscription), ':pid': { S: input.projectId } },
          // Subscribing again is how a broken subscription is repaired (the bot was invited meanwhile).
          'attribute_not_exists(#c) OR attribute_exists(#c.broken_at)',
        );
        return { status: 'subscribed', subscription };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      const existing = (await this.forProject(input.projectId)).find((s) => s.channel === input.channel);
      return { status: 'already', subscription: existing ?? subscription };
    });
  }

  async unsubscribe(projectId: string, channel: string): Promise<boolean> {
    return guard('unsubscribe', async () => {
      let removed = true;
      try {
        await this.update(this.projectKey(projectId), 'REMOVE #c', { '#c': channelAttr(channel) }, undefined, 'attribute_exists(#c)');
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        removed = false;
      }
      // Also clears an index entry a crashed subscribe left behind.
      await this.update(this.channelKey(channel), 'REMOVE #p', { '#p': projectAttr(projectId) });
      return removed;
    });
  }

  async change(projectId: string, channel: string, change: SettingsChange, actor: Actor, nowMs: number): Promise<Subscription | null> {
    return guard('change', async () => {
      const { expression, names, values } = changeExpression(change, actor, nowMs);
      return this.updateEntry(projectId, channel, expression, names, values, 'attribute_exists(#c)');
    });
  }

  async setFilter(
    projectId: string,
    channel: string,
    filter: ChannelFilter | null,
    what: string,
    actor: Actor,
    nowMs: number,
  ): Promise<Subscription | null> {
    return guard('setFilter', async () => {
      const values: Item = { ':by': { S: actor.userId }, ':at': { N: String(nowMs) }, ':what': { S: what } };
      const sets = '#c.changed_by = :by, #c.changed_at = :at, #c.last_change = :what';
      if (filter !== null) values[':filter'] = filterValue(filter);
      const expression = filter === null ? `SET ${sets} REMOVE #c.#f` : `SET ${sets}, #c.#f = :filter`;
      return this.updateEntry(projectId, channel, expression, { '#f': 'filter' }, values, 'attribute_exists(#c)');
    });
  }

  async markBroken(projectId: string, channel: string, code: string, nowMs: number): Promise<Subscription | null> {
    return guard('markBroken', () =>
      this.updateEntry(
        projectId,
        channel,
        'SET #c.broken_code = :code, #c.broken_at = :at',
        {},
        { ':code': { S: code }, ':at': { N: String(nowMs) } },
        // Only the first marker gets the subscription back (and sends the one notice).
        'attribute_exists(#c) AND attribute_not_exists(#c.broken_at)',
      ),
    );
  }

  async recordChange(channel: string, entry: AuditEntry): Promise<void> {
    return guard('recordChange', async () => {
      for (let round = 0; round < AUDIT_ROUNDS; round++) {
        const appended = await this.appendAudit(channel, entry);
        // Over the kept size (or full under contention): drop the oldest, then done (or try again).
        if (appended === undefined || appended > AUDIT_KEPT) await this.trimAudit(channel);
        if (appended !== undefined) return;
      }
      throw new Error(`the audit list of ${channel} stayed full under contention`);
    });
  }

  async recentChanges(channel: string): Promise<AuditEntry[]> {
    return guard('recentChanges', async () => {
      const result = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: this.auditKey(channel), ConsistentRead: true }),
      );
      const entries = result.Item?.['entries']?.L ?? [];
      return entries
        .slice(-AUDIT_KEPT)
        .reverse()
        .flatMap((value) => parseAuditEntry(value) ?? []);
    });
  }

  /** The list's size after appending; undefined when it is full (the caller trims and tries again). */
  private async appendAudit(channel: string, entry: AuditEntry): Promise<number | undefined> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.auditKey(channel),
          UpdateExpression: 'SET #e = list_append(if_not_exists(#e, :empty), :new)',
          ConditionExpression: 'attribute_not_exists(#e) OR size(#e) < :max',
          ExpressionAttributeNames: { '#e': 'entries' },
          ExpressionAttributeValues: { ':empty': { L: [] }, ':new': { L: [auditValue(entry)] }, ':max': { N: String(AUDIT_STORED) } },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return result.Attributes?.['entries']?.L?.length ?? 1;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** Drops the oldest entry while the list is over the kept size; one entry a write, so concurrent trims never over-drop. */
  private async trimAudit(channel: string): Promise<void> {
    try {
      await this.update(
        this.auditKey(channel),
        'REMOVE #e[0]',
        { '#e': 'entries' },
        { ':kept': { N: String(AUDIT_KEPT) } },
        'size(#e) > :kept',
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** A conditional update of one channel's entry of a project: the entry after it, or null when the condition did not hold. */
  private async updateEntry(
    projectId: string,
    channel: string,
    expression: string,
    names: Record<string, string>,
    values: Record<string, AttributeValue>,
    condition: string,
  ): Promise<Subscription | null> {
    try {
      const result = await this.update(
        this.projectKey(projectId),
        expression,
        { '#c': channelAttr(channel), ...names },
        values,
        condition,
        true,
      );
      const entry = result?.[channelAttr(channel)];
      return entry ? parseEntry(projectId, channel, entry) : null;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }

  async forProject(projectId: string): Promise<Subscription[]> {
    return guard('forProject', async () => {
      const result = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: this.projectKey(projectId), ConsistentRead: true }),
      );
      return subscriptionsOfItem(result.Item);
    });
  }

  async forChannel(channel: string): Promise<Subscription[]> {
    return guard('forChannel', async () => {
      const index = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: this.channelKey(channel), ConsistentRead: true }),
      );
      const projectIds = attributesWithPrefix(index.Item, SUBSCRIPTION_ATTRIBUTES.projectPrefix).map(([id]) => id);
      const items = await this.batchGet(
        projectIds.map((id) => this.projectKey(id)),
        channelAttr(channel),
      );
      return items.flatMap((item) => subscriptionsOfItem(item).filter((s) => s.channel === channel));
    });
  }

  async listAll(): Promise<Subscription[]> {
    return guard('listAll', async () => {
      const all: Subscription[] = [];
      let startKey: Item | undefined;
      do {
        const page = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: 'begins_with(pk, :prefix)',
            ExpressionAttributeValues: { ':prefix': { S: tenantKey(this.tenant, TABLE.prefixes.subscriptionsOfProject) } },
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        );
        for (const item of page.Items ?? []) all.push(...subscriptionsOfItem(item));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return all;
    });
  }

  private async update(
    key: Item,
    expression: string,
    names: Record<string, string>,
    values?: Item,
    condition?: string,
    returnNew = false,
  ): Promise<Item | undefined> {
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: expression,
        ExpressionAttributeNames: names,
        ...(values ? { ExpressionAttributeValues: values } : {}),
        ...(condition ? { ConditionExpression: condition } : {}),
        ...(returnNew ? { ReturnValues: 'ALL_NEW' as const } : {}),
      }),
    );
    return result.Attributes;
  }

  /** Reads the `sub#` items (pk + the one channel attribute), 100 keys a call, retrying unprocessed keys a few rounds. */
  private batchGet(keys: Item[], attribute: string): Promise<Item[]> {
    return batchGetAll(this.client, this.tableName, keys, 'subscription', {
      ProjectionExpression: 'pk, project_id, #c',
      ExpressionAttributeNames: { '#c': attribute },
    });
  }
}

/** Every operation's errors become a SlackAppStoreError naming it. */
const guard = storeGuard('subscription store');

function pk(key: string): Item {
  return { [TABLE.partitionKey]: { S: key } };
}

function auditValue(entry: AuditEntry): AttributeValue {
  return {
    M: {
      who: { S: entry.who },
      at: { N: String(entry.whenMs) },
      what: { S: entry.what },
      pid: { S: entry.projectId },
      pname: { S: entry.projectName.slice(0, AUDIT_NAME_CHARS) },
    },
  };
}

function parseAuditEntry(value: AttributeValue): AuditEntry | undefined {
  const m = value.M;
  const projectId = m?.['pid']?.S;
  if (m === undefined || projectId === undefined) return undefined;
  return {
    who: m['who']?.S ?? '',
    whenMs: Number(m['at']?.N ?? 0),
    what: m['what']?.S ?? '',
    projectId,
    projectName: m['pname']?.S ?? projectId,
  };
}

function channelAttr(channel: string): string {
  return `${SUBSCRIPTION_ATTRIBUTES.channelPrefix}${channel}`;
}

function projectAttr(projectId: string): string {
  return `${SUBSCRIPTION_ATTRIBUTES.projectPrefix}${projectId}`;
}

function newSubscription(input: NewSubscription): Subscription {
  const mode = input.mode ?? 'full';
  return {
    projectId: input.projectId,
    projectName: input.projectName,
    channel: input.channel,
    mode,
    ...(input.mutedUntilMs === undefined ? {} : { mutedUntilMs: input.mutedUntilMs }),
    createdBy: input.actor.userId,
    createdAtMs: input.nowMs,
    changedBy: input.actor.userId,
    changedAtMs: input.nowMs,
    lastChange: input.lastChange ?? 'subscribed',
  };
}

function indexEntry(input: NewSubscription): AttributeValue {
  return { M: { project_name: { S: input.projectName }, subscribed_at: { N: String(input.nowMs) } } };
}

function entryValue(s: Subscription): AttributeValue {
  const entry: Item = {
    project_name: { S: s.projectName },
    mode: { S: s.mode },
    created_by: { S: s.createdBy },
    created_at: { N: String(s.createdAtMs) },
    changed_by: { S: s.changedBy },
    changed_at: { N: String(s.changedAtMs) },
    last_change: { S: s.lastChange },
  };
  if (s.mutedUntilMs !== undefined) entry['muted_until'] = { N: String(s.mutedUntilMs) };
  return { M: entry };
}

function changeExpression(
  change: SettingsChange,
  actor: Actor,
  nowMs: number,
): { expression: string; names: Record<string, string>; values: Item } {
  const values: Item = { ':by': { S: actor.userId }, ':at': { N: String(nowMs) } };
  const sets = ['#c.changed_by = :by', '#c.changed_at = :at', '#c.last_change = :what'];
  const names: Record<string, string> = {};
  let remove = '';
  if (change.kind === 'mute') {
    sets.push('#c.muted_until = :until');
    values[':until'] = { N: String(change.untilMs) };
    values[':what'] = { S: `muted for ${change.label}` };
  } else if (change.kind === 'unmute') {
    remove = ' REMOVE #c.muted_until';
    values[':what'] = { S: 'unmuted' };
  } else {
    sets.push('#c.#mode = :mode');
    names['#mode'] = 'mode';
    values[':mode'] = { S: change.mode };
    values[':what'] = { S: `mode ${change.mode}` };
  }
  return { expression: `SET ${sets.join(', ')}${remove}`, names, values };
}

function attributesWithPrefix(item: Item | undefined, prefix: string): [string, AttributeValue][] {
  return Object.entries(item ?? {})
    .filter(([attribute]) => attribute.startsWith(prefix))
    .map(([attribute, value]) => [attribute.slice(prefix.length), value]);
}

function subscriptionsOfItem(item: Item | undefined): Subscription[] {
  const projectId = item?.['project_id']?.S;
  if (projectId === undefined) return [];
  return attributesWithPrefix(item, SUBSCRIPTION_ATTRIBUTES.channelPrefix).flatMap(([channel, value]) => {
    const parsed = parseEntry(projectId, channel, value);
    return parsed ? [parsed] : [];
  });
}

function parseEntry(projectId: string, channel: string, value: AttributeValue): Subscription | null {
  const m = value.M;
  if (!m) return null;
  const mutedUntil = m['muted_until']?.N;
  const brokenAt = m['broken_at']?.N;
  return {
    projectId,
    projectName: m['project_name']?.S ?? projectId,
    channel,
    mode: parseMode(m['mode']?.S),
    ...(mutedUntil === undefined ? {} : { mutedUntilMs: Number(mutedUntil) }),
    createdBy: m['created_by']?.S ?? '',
    createdAtMs: Number(m['created_at']?.N ?? 0),
    changedBy: m['changed_by']?.S ?? '',
    changedAtMs: Number(m['changed_at']?.N ?? 0),
    lastChange: m['last_change']?.S ?? '',
    ...(brokenAt === undefined ? {} : { broken: { code: m['broken_code']?.S ?? 'unknown', atMs: Number(brokenAt) } }),
    ...filterField(m['filter']),
  };
}

/** A channel filter as stored in the entry (`filter` map: engines list, min_alert, min_change). */
function filterValue(filter: ChannelFilter): AttributeValue {
  const m: Item = {};
  if (filter.engines?.length) m['engines'] = { L: filter.engines.map((e) => ({ S: e })) };
  if (filter.minAlertLevel !== undefined) m['min_alert'] = { S: filter.minAlertLevel };
  if (filter.minChange !== undefined) m['min_change'] = { N: String(filter.minChange) };
  return { M: m };
}

const ALERT_LEVELS: readonly AlertLevel[] = ['critical', 'error', 'warning', 'info'];

function filterField(value: AttributeValue | undefined): { filter?: ChannelFilter } {
  const m = value?.M;
  if (m === undefined) return {};
  const engines = (m['engines']?.L ?? []).flatMap((e) => (e.S === undefined ? [] : [e.S]));
  const level = ALERT_LEVELS.find((l) => l === m['min_alert']?.S);
  const minChange = Number(m['min_change']?.N);
  const filter: ChannelFilter = {
    ...(engines.length > 0 ? { engines } : {}),
    ...(level === undefined ? {} : { minAlertLevel: level }),
    ...(Number.isFinite(minChange) && minChange > 0 ? { minChange } : {}),
  };
  return Object.keys(filter).length === 0 ? {} : { filter };
}

function parseMode(mode: string | undefined): DigestMode {
  return mode === 'changes' ? 'changes' : 'full';
}

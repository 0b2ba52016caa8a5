/**
 * Exactly-once posting without reading channel history. Slack limits conversations.history / replies to
 * 1 request a minute for apps distributed outside the Marketplace, and the history scopes are more than
 * a digest bridge should ask a client's workspace for. So what the bridge posted is kept in a ledger
 * (PostedLedger), keyed by the event id its messages carry in their metadata, under the tenant whose post it
 * is (a connection's posts also carry its id, `connection`, in their metadata: see `withPostedLedger`):
 * - every post whose answer came back records its ts (the known outcomes);
 * - a post whose outcome is unknown (a timeout, a 5xx) records that it is; if it did go through, Slack's
 *   `message_metadata_posted` event for it (the bot's own messages carry metadata) records its ts
 *   through `onMessageMetadataPosted`, registered in the Events API route's table, and settles it;
 * - a retry looks in the ledger instead of the channel, waiting while a post is unsettled, for at most
 *   `settleMs` after its unknown outcome (then it was not posted, or its event is lost: posted again).
 * The history look-up stays the default of a single-workspace deploy (stage `slackPostRecovery`), whose
 * app already has the scopes and no Marketplace limit: there it needs no Events API subscription.
 */
import { ConfigError, optionalString, type Env } from '../config-env';
import { ENV, POST_RECOVERY_MODES, type PostRecovery } from '../contracts';
import { Unavailable } from '../errors';
import { describeError } from '../observability';
import type { Clock, Log, PostedLedger, PostedRecord, SlackMessageMetadata, SlackPoster } from '../ports';
import { STACK_TENANT, tenantLabel, tenantOf, type Tenant } from '../tenancy';
import { isRecord } from '../util';

export interface PostedLedgerOptions {
  /** How long after an unknown outcome a retry waits for its message_metadata_posted event. */
  settleMs: number;
  pollMs: number;
}

/** Slack delivers events within seconds; a retry comes after the record's visibility delay, usually later still. */
export const DEFAULT_POSTED_LEDGER_OPTIONS: PostedLedgerOptions = { settleMs: 10_000, pollMs: 250 };

export interface PostedLedgerDeps {
  /** The ledger of `tenant`'s posts (keyed under its prefix). */
  ledger: PostedLedger;
  /** Whose posts these are; none = the stack's own. */
  tenant?: Tenant | undefined;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  log: Log;
  options?: PostedLedgerOptions | undefined;
}

/** The stage's `slackPostRecovery`: 'history' unless it says 'ledger' (a single-workspace app keeps its history scopes and needs no Events API). */
export function readPostRecovery(env: Env): PostRecovery {
  const value = optionalString(env, ENV.slackPostRecovery) ?? 'history';
  const known = POST_RECOVERY_MODES.find((m) => m === value);
  if (known === undefined)
    throw new ConfigError(ENV.slackPostRecovery, `must be "history" or "ledger" (stage key slackPostRecovery), got "${value}"`);
  return known;
}

/** The event and reply a message's metadata names (`reply` absent for the top-level message), and whose post it is. */
export interface PostedKey {
  eventId: string;
  reply: string | undefined;
  tenant: Tenant;
}

/** The key a message's metadata names, or undefined. */
export function postedKeyOf(metadata: unknown): PostedKey | undefined {
  if (!isRecord(metadata) || !isRecord(metadata['event_payload'])) return undefined;
  const payload = metadata['event_payload'];
  const eventId = payload['event_id'];
  if (typeof eventId !== 'string' || eventId === '') return undefined;
  const reply = payload['reply'];
  const connection = payload['connection'];
  return {
    eventId,
    reply: typeof reply === 'string' || typeof reply === 'number' ? String(reply) : undefined,
    tenant: tenantOf(typeof connection === 'string' && connection !== '' ? connection : undefined),
  };
}

/**
 * The metadata of a tenant's post: a connection's names it (`connection`), so the Slack function's
 * `message_metadata_posted` records the post under that connection's key. Metadata is readable by anyone
 * in the channel; a connection id is not a secret.
 */
function stamped(metadata: SlackMessageMetadata | undefined, tenant: Tenant): SlackMessageMetadata | undefined {
  if (metadata === undefined || tenant.kind === 'stack') return metadata;
  return { ...metadata, event_payload: { ...metadata.event_payload, connection: tenant.connectionId } };
}

/** The poster with its look-ups answered from the ledger, and every post's outcome recorded in it. */
export function withPostedLedger(poster: Pick<SlackPoster, 'post'>, deps: PostedLedgerDeps): SlackPoster {
  const options = deps.options ?? DEFAULT_POSTED_LEDGER_OPTIONS;
  return {
    async post(channel, message, postOptions) {
      const metadata = stamped(postOptions?.metadata, deps.tenant ?? STACK_TENANT);
      const key = postedKeyOf(metadata);
      try {
        const posted = await poster.post(channel, message, postOptions && { ...postOptions, metadata });
        if (key)
          await noted(deps, 'posted', channel, key.eventId, () => deps.ledger.recordPosted(channel, key.eventId, posted.ts, key.reply));
        return posted;
      } catch (error) {
        if (key && error instanceof Unavailable && error.outcomeUnknown) {
          await noted(deps, 'unknown outcome', channel, key.eventId, () =>
            deps.ledger.recordUnknown(channel, key.eventId, key.reply, deps.clock.now()),
          );
        }
        throw error;
      }
    },
    async findPosted(channel, eventId) {
      return (await settled(channel, eventId, (record) => record?.mainTs !== undefined, deps, options))?.mainTs;
    },
    async countReplies(channel, _threadTs, eventId) {
      return (await settled(channel, eventId, () => false, deps, options))?.replies ?? 0;
    },
  };
}

/** The ledger's record, once it has what is looked for or no unknown outcome can still be learned. */
async function settled(
  channel: string,
  eventId: string,
  found: (record: PostedRecord | undefined) => boolean,
  deps: PostedLedgerDeps,
  options: PostedLedgerOptions,
): Promise<PostedRecord | undefined> {
  for (;;) {
    const record = await deps.ledger.find(channel, eventId);
    if (found(record) || record?.unknownAtMs === undefined) return record;
    const waitUntil = record.unknownAtMs + options.settleMs;
    const now = deps.clock.now();
    if (now >= waitUntil) return record;
    await deps.sleep(Math.min(options.pollMs, waitUntil - now));
  }
}

/** A ledger write after the post: its failure is logged, not thrown (the post itself is done; the claim's progress records it too). */
async function noted(deps: PostedLedgerDeps, what: string, channel: string, eventId: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    deps.log.warn(`could not record a post's ${what} in the posted ledger`, { channel, eventId, ...describeError(error) });
  }
}

/** Slack's `message_metadata_posted` event (Events API) as the ledger reads it, parsed by its entry in `SLACK_EVENTS`. */
export interface MessageMetadataPosted {
  /** The app that posted the message. */
  appId: string | undefined;
  channelId: string;
  messageTs: string;
  /** The bridge event (and reply) its metadata names, or undefined for metadata that names none. */
  posted: PostedKey | undefined;
}

/**
 * Records a message the bridge's own app posted (another app could post metadata naming a bridge event:
 * it is ignored, or it would stop a digest being posted) in the ledger of the tenant its metadata names.
 * Idempotent: Slack may deliver an event twice.
 */
export async function onMessageMetadataPosted(
  event: MessageMetadataPosted,
  deps: { ledgerOf: (tenant: Tenant) => PostedLedger; appId: string | undefined; log: Log },
): Promise<'recorded' | 'ignored'> {
  const key = event.posted;
  if (deps.appId === undefined || event.appId !== deps.appId || key === undefined) return 'ignored';
  await deps.ledgerOf(key.tenant).recordPosted(event.channelId, key.eventId, event.messageTs, key.reply);
  deps.log.debug('posted message learned from message_metadata_posted', {
    channel: event.channelId,
    eventId: key.eventId,
    tenant: tenantLabel(key.tenant),
  });
  return 'recorded';
}

/**
 * A digest's thread replies, at most one paced post per invocation. Slack takes about one post a second
 * per channel, so a thread of three replies held the worker 3.3 s after its top-level post while another
 * client's record waited for a free invocation (docs/PERFORMANCE.md §11). Now a reply whose slot is not
 * due at once is handed to a follow-up record (`digest_thread`: the rendered replies, sent with that wait
 * as its delay and its tenant's MessageGroupId); the channel's claim keeps the progress, so each follow-up
 * posts the next reply in order, and a retry or a copy of one continues the thread, never repeats it.
 */
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import { connectionIdProblem } from '../connections/model';
import {
  MESSAGE_ATTRIBUTE_EVENT_ID,
  MESSAGE_ATTRIBUTE_TENANT,
  MESSAGE_ATTRIBUTE_TYPE,
  validateWebhookEvent,
  type WebhookEvent,
} from '../events';
import type { DigestStore, MessageVisibility, PostingProgress, SlackMessage, SlackPostResult, SlackPoster } from '../ports';
import type { PacedChannel, PaceDeps } from '../pacing';
import { tenantLabel, tenantOf } from '../tenancy';
import { isRecord } from '../util';

/** A thread whose top-level message is posted: where its replies go and what they are. */
export interface DigestThread {
  event: WebhookEvent;
  /** The channel the posts are claimed and paced by (the routed channel). */
  channel: string;
  /** Where Slack put the top-level message (its answer's channel). */
  postChannel: string;
  threadTs: string;
  /** The top-level message's metadata event_type; each reply's is `<it>_reply`. */
  eventType: string;
  replies: readonly SlackMessage[];
}

/**
 * What a follow-up record carries: the thread, and the attempt its channel claim reaches when the
 * invocation that sent it released the claim as planned. Any other attempt means a holder died between
 * a post and its progress write: the follow-up looks in Slack before posting.
 */
export interface ThreadFollowUp {
  thread: DigestThread;
  attempt: number;
}

/** A digest_thread message parsed: the follow-up, and the connection whose digest it is (absent: the stack's). */
export interface ThreadFollowUpPayload extends ThreadFollowUp {
  event: WebhookEvent;
  connection?: string | undefined;
}

/** Sends a tenant's follow-up records (bound to the tenant by the worker, shared/worker/queues.ts). */
export interface ThreadHandoff {
  send(followUp: ThreadFollowUp, delaySeconds: number): Promise<void>;
}

/** A reply whose slot is due within this goes in the same invocation (the local stack's 20 ms pace, say); a later one is handed off. */
const INLINE_REPLY_WAIT_MS = 250;

/** SQS's longest DelaySeconds. */
const MAX_DELAY_SECONDS = 900;

/** The queue's largest message (SQS's default and maximum, 1 MiB), less room for the envelope and attributes. */
const FOLLOW_UP_MAX_BYTES = 1_048_576 - 16_384;

/**
 * Whether the thread's follow-up record fits in one queue message. One that does not (replies near every
 * Slack limit at once) is posted in this invocation, each reply waiting for its slot: a send SQS refuses
 * would fail the record again on every retry.
 */
export function followUpFits(thread: Pick<DigestThread, 'event' | 'replies'>): boolean {
  return Buffer.byteLength(JSON.stringify({ event: thread.event, replies: thread.replies })) <= FOLLOW_UP_MAX_BYTES;
}

/**
 * The follow-up's delay: the whole seconds of the wait (at least 1), so it comes back just before its
 * slot and waits the rest within the pace budget, rather than a second after it.
 */
export function handoffDelaySeconds(waitMs: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.floor(waitMs / 1000)));
}

/** Sends follow-ups to the digest queue as `connection`'s (none: the stack's) work: its tenant's group and attributes, as ingest sends its events. */
export function threadHandoff(queue: Pick<MessageVisibility, 'requeue'>, connection: string | undefined): ThreadHandoff {
  const tenant = tenantLabel(tenantOf(connection));
  return {
    send: (followUp, delaySeconds) =>
      queue.requeue(
        {
          body: JSON.stringify(threadFollowUpBody(followUp, connection)),
          attributes: {
            [MESSAGE_ATTRIBUTE_TYPE]: QUEUE_MESSAGE_KINDS.digestThread,
            [MESSAGE_ATTRIBUTE_EVENT_ID]: followUp.thread.event.id,
            [MESSAGE_ATTRIBUTE_TENANT]: tenant,
          },
          groupId: tenant,
        },
        delaySeconds,
      ),
  };
}

export function threadFollowUpBody(followUp: ThreadFollowUp, connection: string | undefined): Record<string, unknown> {
  const { event, channel, postChannel, threadTs, eventType, replies } = followUp.thread;
  return {
    kind: QUEUE_MESSAGE_KINDS.digestThread,
    event,
    ...(connection === undefined ? {} : { connection }),
    thread: { channel, post_channel: postChannel, thread_ts: threadTs, event_type: eventType, replies, attempt: followUp.attempt },
  };
}

/** A digest_thread body, or why it is not one. */
export function parseThreadFollowUp(body: Record<string, unknown>): ThreadFollowUpPayload | string {
  const validation = validateWebhookEvent(body['event']);
  if (!validation.ok) return `digest_thread message without its event: ${validation.reason}`;
  const connection = body['connection'];
  if (connection !== undefined && (typeof connection !== 'string' || connectionIdProblem(connection) !== undefined))
    return 'digest_thread message with a connection that is not a connection id';
  const thread = body['thread'];
  if (!isRecord(thread)) return 'digest_thread message without its thread';
  const { channel, post_channel: postChannel, thread_ts: threadTs, event_type: eventType, replies, attempt } = thread;
  if (!nonEmpty(channel) || !nonEmpty(postChannel) || !nonEmpty(threadTs) || !nonEmpty(eventType))
    return 'digest_thread message lacks its channel, post_channel, thread_ts or event_type';
  if (!Array.isArray(replies) || !replies.every(isSlackMessage)) return 'digest_thread message whose replies are not Slack messages';
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) return 'digest_thread message without its attempt';
  const event = validation.event;
  return {
    event,
    ...(connection === undefined ? {} : { connection }),
    thread: { event, channel, postChannel, threadTs, eventType, replies },
    attempt,
  };
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isSlackMessage(value: unknown): value is SlackMessage {
  return isRecord(value) && typeof value['text'] === 'string' && Array.isArray(value['blocks']);
}

export interface ThreadDeps extends PaceDeps {
  slack: SlackPoster;
  store: DigestStore;
  /** Where a reply not due at once goes; none = every reply in this invocation, each waiting for its slot. */
  threads?: ThreadHandoff | undefined;
}

/** The channel's claim, as the replies are recorded under it. */
interface ThreadClaim {
  token: string;
  attempt: number;
}

/**
 * The rest of a thread, handed on: the caller releases the channel's claim (its progress kept), then
 * sends the follow-up. Sent first, it could come back while the claim is still held and wait out the
 * lease. Should the send fail, the error goes on and the record is retried; its retry, or a follow-up,
 * finds the claim released and continues the thread.
 */
export interface Handoff {
  send(): Promise<void>;
}

/**
 * Posts the replies from `progress.repliesPosted` on, recording each under the channel's claim. With a
 * handoff, the first reply goes in the slot the caller reserved (`slotReserved`) and every later one only
 * if its slot is due within INLINE_REPLY_WAIT_MS; otherwise the rest is returned for a follow-up (Handoff). `onPosted` sees each reply's answer.
 */
export async function postReplies(
  thread: DigestThread,
  claim: ThreadClaim,
  progress: PostingProgress,
  paced: PacedChannel,
  deps: ThreadDeps,
  options: { handoff: boolean; slotReserved: boolean; onPosted?: (reply: SlackMessage, posted: SlackPostResult) => void },
): Promise<'done' | Handoff> {
  const threads = options.handoff && deps.pacer !== undefined && followUpFits(thread) ? deps.threads : undefined;
  let reserved = options.slotReserved;
  for (let i = progress.repliesPosted; i < thread.replies.length; i++) {
    const reply = thread.replies[i];
    if (!reply) continue;
    if (threads && !reserved) {
      const waitMs = await paced.reserveWithin(INLINE_REPLY_WAIT_MS);
      if (waitMs !== undefined) return { send: () => threads.send({ thread, attempt: claim.attempt + 1 }, handoffDelaySeconds(waitMs)) };
    }
    reserved = false;
    const metadata = { event_type: `${thread.eventType}_reply`, event_payload: { event_id: thread.event.id, reply: i + 1 } };
    const posted = await paced.post((retryRateLimited) =>
      deps.slack.post(progress.channel ?? thread.postChannel, reply, {
        threadTs: progress.mainTs ?? thread.threadTs,
        metadata,
        retryRateLimited,
      }),
    );
    options.onPosted?.(reply, posted);
    progress.repliesPosted = i + 1;
    await deps.store.recordChannelProgress(thread.event.id, thread.channel, claim.token, progress);
  }
  return 'done';
}

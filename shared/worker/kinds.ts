/**
 * The table of queued message kinds: each kind's payload (as ./parse.ts reads it), the queue that
 * carries it and what its record is called in log lines. Each kind's handler is its feature's
 * (./queues.ts puts them on their queues). A kind added to `MessagePayloads` (or an event type added
 * to shared/events.ts) fails `tsc` here until it has its entry, and in its queue's handler table
 * until it has its handler.
 */
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import type { EventDataByType, HandledEventType, WebhookEvent } from '../events';
import type { WorkLabel } from '../queue-work';
import type { QuietCatchUpMessage } from '../digest/quiet-catch-up';
import type { ThreadFollowUpPayload } from '../digest/thread';
import { commandLabel } from '../slack-app/deferred-kind';
import type { DeferredSlackCommand } from '../slack-app/ports';
import { homeLabel } from '../slack-app/home/publish';
import type { HomeRequest } from '../slack-app/home/ports';
import type { WeeklySweepMessage } from '../weekly/ports';

/** A webhook event of a handled type, its data parsed. */
export interface EventPayload<T extends HandledEventType> {
  event: WebhookEvent;
  data: EventDataByType[T];
  /** The connection whose webhook received it: its read API and routes serve it; absent = the stack's own. */
  connection?: string | undefined;
}

/** Every kind the worker acts on, and its payload: each handled event type is a kind of its own. */
export type MessagePayloads = { [T in HandledEventType]: EventPayload<T> } & {
  /** A `/visibility` command the Slack endpoint deferred (it needs the read API). */
  [QUEUE_MESSAGE_KINDS.slackCommand]: DeferredSlackCommand;
  /** Publish a user's App Home portfolio (the Slack endpoint queued it: the tab was opened, paged or subscribed from). */
  [QUEUE_MESSAGE_KINDS.slackHome]: HomeRequest;
  /** Post the weekly reports that are due (the stack's schedule, or `bridge trigger weekly`). */
  [QUEUE_MESSAGE_KINDS.weeklySweep]: WeeklySweepMessage;
  /** Post the catch-ups of channels whose quiet hours ended (the stack's 5-minute schedule). */
  [QUEUE_MESSAGE_KINDS.quietCatchUp]: QuietCatchUpMessage;
  /** Post a digest's next thread replies (the digest, or the follow-up before, handed them on: shared/digest/thread.ts). */
  [QUEUE_MESSAGE_KINDS.digestThread]: ThreadFollowUpPayload;
};

export type MessageKind = keyof MessagePayloads;

/** A parsed message: its kind and its payload, correlated. */
export type KindMessage = { [K in MessageKind]: { kind: K; payload: MessagePayloads[K] } }[MessageKind];

/** The queues of the digest function (two event sources of one function, infra/digest-worker.ts and infra/slack-commands.ts). */
export type QueueName = 'digest' | 'commands';

export interface KindSpec<K extends MessageKind> {
  /** The one queue that carries the kind: on another queue a message of it is quarantined. */
  queue: QueueName;
  label(payload: MessagePayloads[K]): WorkLabel;
}

export type KindSpecs = { readonly [K in MessageKind]: KindSpec<K> };

function eventLabel(payload: { event: WebhookEvent }): WorkLabel {
  return { id: payload.event.id, type: payload.event.type };
}

export const MESSAGE_KINDS = {
  'run.completed': { queue: 'digest', label: eventLabel },
  'draft.ready': { queue: 'digest', label: eventLabel },
  slack_command: { queue: 'commands', label: commandLabel },
  slack_home: { queue: 'commands', label: homeLabel },
  weekly_sweep: { queue: 'digest', label: () => ({ id: 'weekly', type: QUEUE_MESSAGE_KINDS.weeklySweep }) },
  quiet_catch_up: { queue: 'digest', label: () => ({ id: 'quiet-hours', type: QUEUE_MESSAGE_KINDS.quietCatchUp }) },
  digest_thread: { queue: 'digest', label: (payload) => ({ id: payload.event.id, type: QUEUE_MESSAGE_KINDS.digestThread }) },
} as const satisfies KindSpecs;

/** The kinds a queue carries. */
export type KindsOf<Q extends QueueName> = { [K in MessageKind]: (typeof MESSAGE_KINDS)[K]['queue'] extends Q ? K : never }[MessageKind];

export const MESSAGE_KIND_NAMES = Object.keys(MESSAGE_KINDS) as readonly MessageKind[];

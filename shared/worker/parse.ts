/**
 * The one parser of a queued message (the body ingest, the Slack function and the schedules send to
 * SQS, docs/CONTRACTS.md): parsed once into a message of a kind in the kind table (./kinds.ts), or
 * into why it never can be. The worker and `bridge dlq` share it.
 */
import { parseTypedEvent, validateWebhookEvent, type TypedEvent } from '../events';
import { isRecord } from '../util';
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import { parseDeferredSlackCommand } from '../slack-app/service';
import { parseHomeRequest } from '../slack-app/home/publish';
import { parseQuarantinedDelivery, readmitQuarantined, type QuarantinedDelivery } from '../quarantine';
import { parseWeeklySweep } from '../weekly/message';
import { connectionIdProblem } from '../connections/model';
import { parseThreadFollowUp } from '../digest/thread';
import type { KindMessage } from './kinds';

/** What could be read from a message, usable or not (for logs and `bridge dlq list`). */
export interface QueuedMessageHints {
  eventId: string | undefined;
  type: string | undefined;
  projectId: string | undefined;
  /** When ingest accepted the delivery (body `received_at`), when it is a valid timestamp. */
  receivedAt: string | undefined;
  /** The connection whose webhook received it (body `connection`); absent for the stack's own. */
  connection: string | undefined;
}

export type QueuedMessage =
  /**
   * A message of a kind the worker acts on: a webhook event of a handled type (its data parsed by the
   * type's entry in EVENT_TYPES), a deferred `/visibility` command, a weekly sweep, a quiet-hours catch-up.
   */
  | { kind: 'message'; message: KindMessage; hints: QueuedMessageHints }
  /** A replayed quarantined delivery of a type the bridge does not act on: acknowledged, as ingest would. */
  | { kind: 'ignored'; reason: string; hints: QueuedMessageHints }
  | { kind: 'unusable'; reason: string; hints: QueuedMessageHints };

export function parseQueuedMessage(body: string | undefined): QueuedMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return { kind: 'unusable', reason: 'message body is not JSON', hints: hintsOf(undefined) };
  }
  const hints = hintsOf(parsed);
  if (isRecord(parsed) && parsed['kind'] === QUEUE_MESSAGE_KINDS.slackCommand) return slackCommandOf(parsed, hints);
  if (isRecord(parsed) && parsed['kind'] === QUEUE_MESSAGE_KINDS.slackHome) return slackHomeOf(parsed, hints);
  if (isRecord(parsed) && parsed['kind'] === QUEUE_MESSAGE_KINDS.weeklySweep) return weeklySweepOf(parsed, hints);
  if (isRecord(parsed) && parsed['kind'] === QUEUE_MESSAGE_KINDS.quietCatchUp)
    return usable({ kind: 'quiet_catch_up', payload: { kind: 'quiet_catch_up' } }, { ...hints, type: QUEUE_MESSAGE_KINDS.quietCatchUp });
  if (isRecord(parsed) && parsed['kind'] === QUEUE_MESSAGE_KINDS.digestThread) return threadFollowUpOf(parsed, hints);
  const quarantined = parseQuarantinedDelivery(parsed);
  if (quarantined !== undefined) return readmitted(quarantined);
  return queuedEventOf(parsed, hints);
}

/**
 * A delivery ingest quarantined, replayed from the DLQ (`bridge dlq replay`) after an upgrade: the
 * current admission rules decide again. Still unprocessable, it goes back to the DLQ with its reason.
 */
function readmitted(delivery: QuarantinedDelivery): QueuedMessage {
  const hints: QueuedMessageHints = {
    eventId: delivery.event_id,
    type: QUEUE_MESSAGE_KINDS.quarantinedDelivery,
    projectId: undefined,
    receivedAt: delivery.received_at,
    connection: delivery.connection,
  };
  const readmission = readmitQuarantined(delivery);
  if (readmission.kind === 'still_unprocessable')
    return { kind: 'unusable', reason: `quarantined delivery still not processable: ${readmission.reason}`, hints };
  if (readmission.kind === 'ignored') return { kind: 'ignored', reason: `unhandled event type "${readmission.event.type}"`, hints };
  return queuedEventOf(readmission.queued, hintsOf(readmission.queued));
}

function queuedEventOf(parsed: unknown, hints: QueuedMessageHints): QueuedMessage {
  const validation = validateWebhookEvent(isRecord(parsed) ? parsed['event'] : undefined);
  if (!validation.ok) return { kind: 'unusable', reason: `not a queued event: ${validation.reason}`, hints };
  const connection = isRecord(parsed) ? parsed['connection'] : undefined;
  if (connection !== undefined && (typeof connection !== 'string' || connectionIdProblem(connection) !== undefined))
    return { kind: 'unusable', reason: 'queued event with a connection that is not a connection id', hints };
  const typed = parseTypedEvent(validation.event);
  return typed.ok ? usable(eventMessage(typed.data, connection), hints) : { kind: 'unusable', reason: typed.reason, hints };
}

function eventMessage(typed: TypedEvent, connection: string | undefined): KindMessage {
  const from = connection === undefined ? {} : { connection };
  // The kind typed.type gets typed's data: the same type on both sides, which TypeScript cannot correlate.
  return { kind: typed.type, payload: { event: typed.event, data: typed.data, ...from } } as KindMessage;
}

function usable(message: KindMessage, hints: QueuedMessageHints): QueuedMessage {
  return { kind: 'message', message, hints };
}

function slackCommandOf(body: Record<string, unknown>, hints: QueuedMessageHints): QueuedMessage {
  const command = parseDeferredSlackCommand(body);
  if (command === null)
    return {
      kind: 'unusable',
      reason: 'slack_command message lacks a deferred command (subscribe, status or projects) with channel, actor and response_url',
      hints: { ...hints, type: QUEUE_MESSAGE_KINDS.slackCommand },
    };
  return usable({ kind: 'slack_command', payload: command }, { ...hints, type: QUEUE_MESSAGE_KINDS.slackCommand });
}

function slackHomeOf(body: Record<string, unknown>, hints: QueuedMessageHints): QueuedMessage {
  const request = parseHomeRequest(body);
  const typed = { ...hints, type: QUEUE_MESSAGE_KINDS.slackHome };
  if (request === null)
    return {
      kind: 'unusable',
      reason: 'slack_home message lacks its user or page, or names a subscribe without project and channel',
      hints: typed,
    };
  return usable({ kind: 'slack_home', payload: request }, typed);
}

function weeklySweepOf(body: Record<string, unknown>, hints: QueuedMessageHints): QueuedMessage {
  const sweep = parseWeeklySweep(body);
  const typed = { ...hints, type: QUEUE_MESSAGE_KINDS.weeklySweep };
  if (sweep === null)
    return { kind: 'unusable', reason: 'weekly_sweep message with a channel that is not a string, or `now` not true', hints: typed };
  return usable({ kind: 'weekly_sweep', payload: sweep }, typed);
}

function threadFollowUpOf(body: Record<string, unknown>, hints: QueuedMessageHints): QueuedMessage {
  const followUp = parseThreadFollowUp(body);
  const typed = { ...hints, type: QUEUE_MESSAGE_KINDS.digestThread };
  if (typeof followUp === 'string') return { kind: 'unusable', reason: followUp, hints: typed };
  return usable({ kind: 'digest_thread', payload: followUp }, typed);
}

function hintsOf(body: unknown): QueuedMessageHints {
  const envelope = isRecord(body) ? body : {};
  const event = isRecord(envelope['event']) ? envelope['event'] : {};
  const data = isRecord(event['data']) ? event['data'] : {};
  const receivedAt = envelope['received_at'];
  return {
    eventId: nonEmpty(event['id']),
    type: nonEmpty(event['type']),
    projectId: nonEmpty(data['project_id']),
    receivedAt: typeof receivedAt === 'string' && !Number.isNaN(Date.parse(receivedAt)) ? receivedAt : undefined,
    connection: nonEmpty(envelope['connection']),
  };
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

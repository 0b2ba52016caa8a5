/** Replays only the DLQ messages matching a selector: receive → send → delete. */
import {
  DeleteMessageBatchCommand,
  SendMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { aws } from '../../errors';
import {
  ctxFor,
  describeMessage,
  queueDepth,
  RECEIVE_WAIT_SECONDS,
  receiveBatch,
  release,
  REPLAY_HOLD_SECONDS,
  type DlqMessage,
  type QueueRef,
} from './queue';

export interface Selector {
  eventIds: string[];
  type?: string | undefined;
  projectId?: string | undefined;
  /** Only messages received longer ago than this. */
  olderThanMs?: number | undefined;
  /** Only this tenant's messages: a connection id, or `stack` (DlqMessage.tenant). */
  tenant?: string | undefined;
}

export function isSelective(selector: Selector): boolean {
  return (
    selector.eventIds.length > 0 ||
    selector.type !== undefined ||
    selector.projectId !== undefined ||
    selector.olderThanMs !== undefined ||
    selector.tenant !== undefined
  );
}

/** All given criteria must hold; several --event-id values are alternatives. */
export function matchesSelector(message: DlqMessage, selector: Selector): boolean {
  if (selector.eventIds.length > 0 && (message.eventId === undefined || !selector.eventIds.includes(message.eventId))) return false;
  if (selector.type !== undefined && message.type !== selector.type) return false;
  if (selector.projectId !== undefined && message.projectId !== selector.projectId) return false;
  if (selector.olderThanMs !== undefined && (message.ageMs === undefined || message.ageMs < selector.olderThanMs)) return false;
  if (selector.tenant !== undefined && message.tenant !== selector.tenant) return false;
  return true;
}

export interface ReplaySelectedResult {
  mode: 'selected';
  dryRun: boolean;
  /** Distinct DLQ messages looked at. */
  scanned: number;
  matched: number;
  moved: DlqMessage[];
  /** Matching messages that could not be sent (left in the DLQ). */
  failed: { message: DlqMessage; error: string }[];
  /** Sent to the queue but not deleted from the DLQ: the digest will see them twice (it de-duplicates by event id). */
  notDeleted: DlqMessage[];
  /** Dry run: what would move. */
  wouldMove: DlqMessage[];
  dlq: string;
  destination: string;
}

export interface ReplaySelectedOptions {
  selector: Selector;
  dryRun: boolean;
  now: () => number;
  /** Most receive passes over the DLQ (default 2). */
  maxPasses?: number;
  onMessage?: (message: DlqMessage, outcome: 'moved' | 'would-move' | 'failed' | 'not-deleted') => void;
  onScanned?: (scanned: number, depth: number) => void;
}

function sendableAttributes(message: Message): Record<string, MessageAttributeValue> | undefined {
  const attributes = message.MessageAttributes;
  if (attributes === undefined) return undefined;
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value.DataType === undefined) continue;
    out[name] = {
      DataType: value.DataType,
      ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
    };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Moves only the DLQ messages that match `selector` back to the digest queue: each matching message
 * is sent (same body, same message attributes, its tenant as MessageGroupId) and deleted from the DLQ only once the send
 * succeeded. Messages looked at are hidden for the scan (so each receive returns new ones) and the
 * non-matching ones are made visible again at the end, also on failure.
 *
 * Bounded: at most `maxPasses` passes; a pass ends at an empty receive, once every message the DLQ
 * held at the start has been seen, or after a receive budget derived from that depth. A second
 * pass only runs when the first saw fewer messages than the DLQ held (some were in flight).
 */
export async function replaySelected(
  sqs: SQSClient,
  dlq: QueueRef,
  source: QueueRef,
  options: ReplaySelectedOptions,
): Promise<ReplaySelectedResult> {
  const dlqDepth = await queueDepth(sqs, dlq);
  await queueDepth(sqs, source); // fails early (QueueDoesNotExist) before anything is received
  const depth = dlqDepth.visible + dlqDepth.inFlight;
  const result: ReplaySelectedResult = {
    mode: 'selected',
    dryRun: options.dryRun,
    scanned: 0,
    matched: 0,
    moved: [],
    failed: [],
    notDeleted: [],
    wouldMove: [],
    dlq: dlq.url,
    destination: source.url,
  };
  /** Receipt handles of messages hidden by this scan and still in the DLQ, by message id. */
  const held = new Map<string, string>();
  const seen = new Set<string>();
  const maxPasses = Math.max(1, options.maxPasses ?? 2);
  const receiveBudget = Math.ceil(depth / 10) * 2 + 5;

  try {
    for (let pass = 0; pass < maxPasses && depth > 0; pass++) {
      for (let receives = 0; receives < receiveBudget && seen.size < depth; receives++) {
        const batch = await receiveBatch(sqs, dlq, 10, REPLAY_HOLD_SECONDS, RECEIVE_WAIT_SECONDS);
        if (batch.length === 0) break;
        const toMove: { message: Message; info: DlqMessage; handle: string }[] = [];
        for (const message of batch) {
          const id = message.MessageId ?? '';
          const handle = message.ReceiptHandle ?? '';
          if (seen.has(id)) {
            // Seen before and visible again (the hold ran out on a long scan): keep the newest handle.
            if (held.has(id)) held.set(id, handle);
            continue;
          }
          seen.add(id);
          held.set(id, handle);
          const info = describeMessage(message, options.now());
          if (!matchesSelector(info, options.selector)) continue;
          result.matched += 1;
          if (options.dryRun) {
            result.wouldMove.push(info);
            options.onMessage?.(info, 'would-move');
          } else {
            toMove.push({ message, info, handle });
          }
        }
        result.scanned = seen.size;
        options.onScanned?.(seen.size, depth);
        if (toMove.length > 0) await moveBatch(sqs, dlq, source, toMove, held, result, options);
      }
      if (seen.size >= depth) break;
    }
  } finally {
    await release(sqs, dlq, [...held.values()]);
  }
  return result;
}

async function moveBatch(
  sqs: SQSClient,
  dlq: QueueRef,
  source: QueueRef,
  items: { message: Message; info: DlqMessage; handle: string }[],
  held: Map<string, string>,
  result: ReplaySelectedResult,
  options: ReplaySelectedOptions,
): Promise<void> {
  const sent = await aws(ctxFor(source), () =>
    sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: source.url,
        Entries: items.map((item, i) => {
          const attributes = sendableAttributes(item.message);
          return {
            Id: `m${i}`,
            MessageBody: item.message.Body ?? '',
            ...(attributes !== undefined ? { MessageAttributes: attributes } : {}),
            // Back on the fair queue as its tenant's, however it reached the DLQ.
            MessageGroupId: item.info.tenant,
          };
        }),
      }),
    ),
  );
  const sentIds = new Set((sent.Successful ?? []).map((entry) => entry.Id));
  for (const failure of sent.Failed ?? []) {
    const item = items[Number((failure.Id ?? '').slice(1))];
    if (item === undefined) continue;
    result.failed.push({ message: item.info, error: `${failure.Code ?? 'error'}: ${failure.Message ?? 'send failed'}` });
    options.onMessage?.(item.info, 'failed');
  }
  const toDelete = items.map((item, i) => ({ item, id: `m${i}` })).filter(({ id }) => sentIds.has(id));
  if (toDelete.length === 0) return;
  let deletedIds = new Set<string>();
  try {
    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: dlq.url,
        Entries: toDelete.map(({ item, id }) => ({ Id: id, ReceiptHandle: item.handle })),
      }),
    );
    deletedIds = new Set((deleted.Successful ?? []).map((entry) => entry.Id ?? ''));
  } catch {
    // Sent but not deleted: reported below; the digest de-duplicates by event id.
  }
  for (const { item, id } of toDelete) {
    if (deletedIds.has(id)) {
      held.delete(item.message.MessageId ?? '');
      result.moved.push(item.info);
      options.onMessage?.(item.info, 'moved');
    } else {
      result.notDeleted.push(item.info);
      options.onMessage?.(item.info, 'not-deleted');
    }
  }
}

/**
 * `bridge dlq stats | peek | replay`: look at and drain the digest queue's dead-letter queue.
 *
 * - stats: depths of the DLQ and the digest queue (visible / in flight / delayed). The age of the
 *   oldest message is not shown: SQS only publishes it as a CloudWatch metric
 *   (ApproximateAgeOfOldestMessage); `peek` shows each message's age instead.
 * - peek: reads messages without consuming them (see `peekDlq`).
 * - replay: the whole DLQ with an SQS message move task, or only matching messages by
 *   receive → send → delete (see `replaySelected`).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
  type ListMessageMoveTasksResultEntry,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { MESSAGE_ATTRIBUTE_EVENT_ID, MESSAGE_ATTRIBUTE_PROJECT, MESSAGE_ATTRIBUTE_TYPE } from '../../shared/events';
import { bool, buildContext, duration, formatAge, int, parse, str, strs, AWS_OPTIONS, type CommandContext, type OptionSpec } from '../args';
import { endpointFor, sqsClient, STACK_OUTPUTS } from '../aws';
import { aws, CliError, explainError, UsageError, type ErrorContext } from '../errors';
import type { CliIo, Output } from '../io';
import { needLocal } from '../ready-file';
import type { CommandResult } from '../result';

// ---------------------------------------------------------------------------------------------
// Queue access
// ---------------------------------------------------------------------------------------------

export interface QueueRef {
  url: string;
  /** For error messages: the SQS endpoint override, when there is one. */
  endpoint?: string | undefined;
}

function ctxFor(queue: QueueRef): ErrorContext {
  return { service: 'SQS', resource: queue.url, ...(queue.endpoint !== undefined ? { endpoint: queue.endpoint } : {}) };
}

export interface QueueDepth {
  url: string;
  arn: string;
  visible: number;
  inFlight: number;
  delayed: number;
}

export async function queueDepth(sqs: SQSClient, queue: QueueRef): Promise<QueueDepth> {
  const result = await aws(ctxFor(queue), () =>
    sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    ),
  );
  const attributes = result.Attributes ?? {};
  const count = (name: string): number => {
    const value = Number(attributes[name as keyof typeof attributes] ?? '0');
    return Number.isFinite(value) ? value : 0;
  };
  return {
    url: queue.url,
    arn: attributes.QueueArn ?? '',
    visible: count('ApproximateNumberOfMessages'),
    inFlight: count('ApproximateNumberOfMessagesNotVisible'),
    delayed: count('ApproximateNumberOfMessagesDelayed'),
  };
}

/** What the CLI shows of a DLQ message: the queued event's identity and how long it has waited. */
export interface DlqMessage {
  messageId: string;
  eventId: string | undefined;
  type: string | undefined;
  projectId: string | undefined;
  /** When ingest accepted the delivery (body `received_at`), else when the message was sent. */
  receivedAt: string | undefined;
  ageMs: number | undefined;
  /** Receives before this CLI's own receive (the digest's attempts). */
  receiveCount: number | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function attr(message: Message, name: string): string | undefined {
  const value = message.MessageAttributes?.[name]?.StringValue;
  return value === undefined || value === '' ? undefined : value;
}

/** Reads the queue message format of docs/CONTRACTS.md, falling back to the message attributes. */
export function describeMessage(message: Message, now: number): DlqMessage {
  let event: Record<string, unknown> = {};
  let receivedAt: string | undefined;
  try {
    const body: unknown = JSON.parse(message.Body ?? '');
    if (isRecord(body)) {
      if (isRecord(body['event'])) event = body['event'];
      if (typeof body['received_at'] === 'string' && !Number.isNaN(Date.parse(body['received_at']))) receivedAt = body['received_at'];
    }
  } catch {
    // Not the bridge's format: attributes only.
  }
  const data = isRecord(event['data']) ? event['data'] : {};
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
  const sent = Number(message.Attributes?.SentTimestamp);
  if (receivedAt === undefined && Number.isFinite(sent) && sent > 0) receivedAt = new Date(sent).toISOString();
  const received = Number(message.Attributes?.ApproximateReceiveCount);
  return {
    messageId: message.MessageId ?? '',
    eventId: text(event['id']) ?? attr(message, MESSAGE_ATTRIBUTE_EVENT_ID),
    type: text(event['type']) ?? attr(message, MESSAGE_ATTRIBUTE_TYPE),
    projectId: text(data['project_id']) ?? attr(message, MESSAGE_ATTRIBUTE_PROJECT),
    receivedAt,
    ageMs: receivedAt === undefined ? undefined : Math.max(0, now - Date.parse(receivedAt)),
    receiveCount: Number.isFinite(received) && received > 0 ? received - 1 : undefined,
  };
}

const RECEIVE_ATTRIBUTES = {
  MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'] as ('SentTimestamp' | 'ApproximateReceiveCount')[],
  MessageAttributeNames: ['All'],
};

async function receiveBatch(sqs: SQSClient, queue: QueueRef, max: number, visibilityTimeout: number, waitSeconds: number): Promise<Message[]> {
  const result = await aws(ctxFor(queue), () =>
    sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: Math.min(10, Math.max(1, max)),
        VisibilityTimeout: visibilityTimeout,
        WaitTimeSeconds: waitSeconds,
        ...RECEIVE_ATTRIBUTES,
      }),
    ),
  );
  return result.Messages ?? [];
}

/** Makes messages visible again at once (best effort: a failure only delays them by the hold time). */
async function release(sqs: SQSClient, queue: QueueRef, handles: readonly string[]): Promise<number> {
  let failed = 0;
  for (let i = 0; i < handles.length; i += 10) {
    const chunk = handles.slice(i, i + 10);
    try {
      const result = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queue.url,
          Entries: chunk.map((handle, j) => ({ Id: `m${j}`, ReceiptHandle: handle, VisibilityTimeout: 0 })),
        }),
      );
      failed += result.Failed?.length ?? 0;
    } catch {
      failed += chunk.length;
    }
  }
  return failed;
}

// ---------------------------------------------------------------------------------------------
// peek
// ---------------------------------------------------------------------------------------------

/** How long peeked messages are hidden while the CLI walks the queue (released at once after). */
const PEEK_HOLD_SECONDS = 30;
/** How long `replay` hides messages it is looking at; a crash leaves them hidden at most this long. */
const REPLAY_HOLD_SECONDS = 300;
/** Long-poll wait per receive: short polls on SQS sample only some servers and can come back empty. */
const RECEIVE_WAIT_SECONDS = 1;

/**
 * Reads up to `max` DLQ messages without consuming them.
 *
 * Receiving is the only way SQS shows a message, and a receive hides it for the visibility
 * timeout. A receive with VisibilityTimeout 0 would leave every message visible, so the next
 * receive could return the same ones again and the walk would never reach the rest. Instead each
 * message is hidden briefly (30 s) so successive receives return distinct messages, and all of them
 * are made visible again (ChangeMessageVisibility 0) right after, also when the walk fails. Nothing
 * is deleted; the only trace is ApproximateReceiveCount + 1 (the DLQ has no redrive policy, so the
 * count has no effect; shown counts exclude this receive).
 */
export async function peekDlq(sqs: SQSClient, dlq: QueueRef, options: { max: number; now: () => number }): Promise<{ depth: QueueDepth; messages: DlqMessage[] }> {
  const depth = await queueDepth(sqs, dlq);
  const wanted = Math.min(options.max, depth.visible);
  const messages: DlqMessage[] = [];
  const handles: string[] = [];
  const seen = new Set<string>();
  try {
    const maxReceives = Math.ceil(wanted / 10) + 3;
    for (let receives = 0; messages.length < wanted && receives < maxReceives; receives++) {
      const batch = await receiveBatch(sqs, dlq, wanted - messages.length, PEEK_HOLD_SECONDS, RECEIVE_WAIT_SECONDS);
      if (batch.length === 0) break;
      for (const message of batch) {
        if (message.ReceiptHandle !== undefined) handles.push(message.ReceiptHandle);
        const id = message.MessageId ?? '';
        if (seen.has(id)) continue;
        seen.add(id);
        messages.push(describeMessage(message, options.now()));
      }
    }
  } finally {
    await release(sqs, dlq, handles);
  }
  return { depth, messages };
}

// ---------------------------------------------------------------------------------------------
// replay: everything, with a message move task
// ---------------------------------------------------------------------------------------------

export interface MoveProgress {
  status: string;
  moved: number;
  toMove: number | undefined;
}

export interface ReplayAllResult {
  mode: 'all';
  dryRun: boolean;
  status: string;
  moved: number;
  toMove: number;
  failureReason?: string;
  dlq: string;
  destination: string;
}

export interface ReplayAllOptions {
  rate?: number | undefined;
  dryRun: boolean;
  pollIntervalMs: number;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (progress: MoveProgress) => void;
}

export async function replayAll(sqs: SQSClient, dlq: QueueRef, source: QueueRef, options: ReplayAllOptions): Promise<ReplayAllResult> {
  const dlqDepth = await queueDepth(sqs, dlq);
  const sourceDepth = await queueDepth(sqs, source);
  const pending = dlqDepth.visible + dlqDepth.inFlight + dlqDepth.delayed;
  const base = { mode: 'all' as const, dryRun: options.dryRun, dlq: dlq.url, destination: source.url };
  if (options.dryRun) return { ...base, status: 'DRY_RUN', moved: 0, toMove: pending };
  if (pending === 0) return { ...base, status: 'EMPTY', moved: 0, toMove: 0 };

  let handle: string;
  try {
    const started = await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: dlqDepth.arn,
        DestinationArn: sourceDepth.arn,
        ...(options.rate !== undefined ? { MaxNumberOfMessagesPerSecond: options.rate } : {}),
      }),
    );
    handle = started.TaskHandle ?? '';
  } catch (err) {
    if (err instanceof Error && /already a task running/i.test(err.message)) {
      throw new CliError(
        'a message move task is already running for this DLQ',
        'wait for it to finish (`bridge dlq stats` shows the DLQ draining) or cancel it in the SQS console, then run replay again',
        'task_running',
      );
    }
    throw explainError(err, ctxFor(dlq));
  }

  for (;;) {
    const listed = await aws(ctxFor(dlq), () => sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqDepth.arn, MaxResults: 10 })));
    const results: ListMessageMoveTasksResultEntry[] = listed.Results ?? [];
    // Only one task may run per DLQ: ours while it runs (listed with its handle), else the latest finished one.
    const task = results.find((entry) => entry.TaskHandle === handle) ?? results.find((entry) => entry.Status !== 'RUNNING');
    const status = task?.Status ?? 'RUNNING';
    const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
    const toMove = task?.ApproximateNumberOfMessagesToMove;
    options.onProgress?.({ status, moved, toMove });
    if (task !== undefined && status !== 'RUNNING') {
      return {
        ...base,
        status,
        moved,
        toMove: toMove ?? moved,
        ...(task.FailureReason !== undefined ? { failureReason: task.FailureReason } : {}),
      };
    }
    await options.sleep(options.pollIntervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// replay: selected messages, receive → send → delete
// ---------------------------------------------------------------------------------------------

export interface Selector {
  eventIds: string[];
  type?: string | undefined;
  projectId?: string | undefined;
  /** Only messages received longer ago than this. */
  olderThanMs?: number | undefined;
}

export function isSelective(selector: Selector): boolean {
  return selector.eventIds.length > 0 || selector.type !== undefined || selector.projectId !== undefined || selector.olderThanMs !== undefined;
}

/** All given criteria must hold; several --event-id values are alternatives. */
export function matchesSelector(message: DlqMessage, selector: Selector): boolean {
  if (selector.eventIds.length > 0 && (message.eventId === undefined || !selector.eventIds.includes(message.eventId))) return false;
  if (selector.type !== undefined && message.type !== selector.type) return false;
  if (selector.projectId !== undefined && message.projectId !== selector.projectId) return false;
  if (selector.olderThanMs !== undefined && (message.ageMs === undefined || message.ageMs < selector.olderThanMs)) return false;
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
 * is sent (same body, same message attributes) and deleted from the DLQ only once the send
 * succeeded. Messages looked at are hidden for the scan (so each receive returns new ones) and the
 * non-matching ones are made visible again at the end, also on failure.
 *
 * Bounded: at most `maxPasses` passes; a pass ends at an empty receive, once every message the DLQ
 * held at the start has been seen, or after a receive budget derived from that depth. A second
 * pass only runs when the first saw fewer messages than the DLQ held (some were in flight).
 */
export async function replaySelected(sqs: SQSClient, dlq: QueueRef, source: QueueRef, options: ReplaySelectedOptions): Promise<ReplaySelectedResult> {
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
          return { Id: `m${i}`, MessageBody: item.message.Body ?? '', ...(attributes !== undefined ? { MessageAttributes: attributes } : {}) };
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
      new DeleteMessageBatchCommand({ QueueUrl: dlq.url, Entries: toDelete.map(({ item, id }) => ({ Id: id, ReceiptHandle: item.handle })) }),
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

// ---------------------------------------------------------------------------------------------
// Command
// ---------------------------------------------------------------------------------------------

export const DLQ_OPTIONS: OptionSpec = {
  ...AWS_OPTIONS,
  endpoint: { type: 'string' },
  'queue-url': { type: 'string' },
  'dlq-url': { type: 'string' },
  max: { type: 'string' },
  rate: { type: 'string' },
  'event-id': { type: 'string', multiple: true },
  type: { type: 'string' },
  project: { type: 'string' },
  'older-than': { type: 'string' },
  'dry-run': { type: 'boolean' },
};

async function resolveQueue(ctx: CommandContext, flag: string | undefined, local: 'queueUrl' | 'dlqUrl', output: string, flagName: string): Promise<string> {
  if (flag !== undefined) return flag;
  if (ctx.local !== undefined) return needLocal(ctx.local, ctx.local[local], local);
  return ctx.stack.require(output, flagName);
}

function row(cells: string[], widths: number[]): string {
  return cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
}

function printMessages(out: Output, messages: DlqMessage[]): void {
  const header = ['EVENT ID', 'TYPE', 'PROJECT', 'AGE', 'RECEIVES'];
  const rows = messages.map((m) => [m.eventId ?? '?', m.type ?? '?', m.projectId ?? '-', m.ageMs === undefined ? '?' : formatAge(m.ageMs), m.receiveCount === undefined ? '?' : String(m.receiveCount)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  out.say(row(header, widths));
  for (const r of rows) out.say(row(r, widths));
}

export async function dlqCommand(argv: readonly string[], io: CliIo): Promise<CommandResult> {
  const sub = argv[0];
  if (sub === undefined || sub.startsWith('-')) {
    throw new UsageError(sub === undefined ? 'dlq needs a subcommand: stats, peek or replay' : `unknown dlq option ${sub}; give a subcommand first`, 'dlq');
  }
  if (sub !== 'stats' && sub !== 'peek' && sub !== 'replay') throw new UsageError(`unknown dlq subcommand "${sub}"`, 'dlq');
  const command = `dlq ${sub}`;
  const parsed = parse(command, argv.slice(1), DLQ_OPTIONS);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0] ?? ''}"`, command);
  const only = (names: string[]): void => {
    for (const name of Object.keys(DLQ_OPTIONS)) {
      if (name in AWS_OPTIONS || ['endpoint', 'queue-url', 'dlq-url'].includes(name) || names.includes(name)) continue;
      if (parsed.values[name] !== undefined) throw new UsageError(`--${name} does not apply to ${command}`, command);
    }
  };
  only(sub === 'peek' ? ['max'] : sub === 'replay' ? ['rate', 'event-id', 'type', 'project', 'older-than', 'dry-run'] : []);

  // Every flag is checked before anything is looked up, so a usage error never waits on AWS.
  const max = int(parsed, 'max', 1, 1000) ?? 10;
  const rate = int(parsed, 'rate', 1, 500);
  const selector: Selector = {
    eventIds: strs(parsed, 'event-id'),
    type: str(parsed, 'type'),
    projectId: str(parsed, 'project'),
    olderThanMs: duration(parsed, 'older-than'),
  };
  const dryRun = bool(parsed, 'dry-run');
  if (isSelective(selector) && rate !== undefined) throw new UsageError('--rate applies to a whole-DLQ replay (no selector)', command);

  const endpoint = str(parsed, 'endpoint');
  const ctx = await buildContext(parsed, io, endpoint !== undefined ? { sqs: endpoint } : {});
  const out = ctx.out;
  const sqs = sqsClient(ctx.settings);
  const sqsEndpoint = endpointFor(ctx.settings, 'sqs');
  try {
    const dlq: QueueRef = { url: await resolveQueue(ctx, str(parsed, 'dlq-url'), 'dlqUrl', STACK_OUTPUTS.dlqUrl, '--dlq-url'), endpoint: sqsEndpoint };
    const needSource = sub !== 'peek';
    const source: QueueRef | undefined = needSource
      ? { url: await resolveQueue(ctx, str(parsed, 'queue-url'), 'queueUrl', STACK_OUTPUTS.queueUrl, '--queue-url'), endpoint: sqsEndpoint }
      : undefined;

    if (sub === 'stats') {
      const dlqDepth = await queueDepth(sqs, dlq);
      const queueDepthInfo = await queueDepth(sqs, source ?? dlq);
      const line = (label: string, d: QueueDepth): string => `${label.padEnd(6)} visible ${d.visible}  in flight ${d.inFlight}  delayed ${d.delayed}  ${d.url}`;
      out.say(line('DLQ', dlqDepth));
      out.say(line('queue', queueDepthInfo));
      if (dlqDepth.visible + dlqDepth.inFlight > 0) out.say('Inspect with `bridge dlq peek`; move back with `bridge dlq replay`.');
      const strip = (d: QueueDepth): Omit<QueueDepth, 'arn'> => ({ url: d.url, visible: d.visible, inFlight: d.inFlight, delayed: d.delayed });
      return { exitCode: 0, json: { dlq: strip(dlqDepth), queue: strip(queueDepthInfo) } };
    }

    if (sub === 'peek') {
      const progress = out.progress();
      progress.update('reading the DLQ…');
      const { depth, messages } = await peekDlq(sqs, dlq, { max, now: ctx.now });
      progress.done();
      if (messages.length === 0) out.say(`DLQ is empty (${dlq.url})`);
      else {
        printMessages(out, messages);
        out.say(`${messages.length} shown of ${depth.visible} visible (${depth.inFlight} in flight); nothing was consumed.`);
      }
      return { exitCode: 0, json: { dlq: dlq.url, visible: depth.visible, inFlight: depth.inFlight, messages } };
    }

    // replay
    if (source === undefined) throw new Error('unreachable: replay without a source queue');
    if (isSelective(selector)) {
      const progress = out.progress();
      const result = await replaySelected(sqs, dlq, source, {
        selector,
        dryRun,
        now: ctx.now,
        onScanned: (scanned, depth) => progress.update(`scanned ${scanned}/${depth}`),
        onMessage: (message, outcome) => {
          progress.done();
          const label = { moved: 'moved', 'would-move': 'would move', failed: 'FAILED', 'not-deleted': 'sent, NOT deleted' }[outcome];
          out.say(`${label.padEnd(11)} ${message.eventId ?? message.messageId}  ${message.type ?? '?'}  ${message.projectId ?? '-'}`);
        },
      });
      progress.done();
      if (dryRun) out.say(`dry run: ${result.matched} of ${result.scanned} DLQ messages match; nothing moved.`);
      else {
        out.say(`moved ${result.moved.length} of ${result.matched} matching (${result.scanned} scanned) to ${source.url}`);
        if (result.failed.length > 0) out.say(`${result.failed.length} could not be sent and stay in the DLQ: ${result.failed.map((f) => f.error).join('; ')}`);
        if (result.notDeleted.length > 0) {
          out.say(`${result.notDeleted.length} were sent but not deleted from the DLQ; the digest de-duplicates them by event id.`);
        }
      }
      return { exitCode: result.failed.length > 0 || result.notDeleted.length > 0 ? 1 : 0, json: result };
    }

    const progress = out.progress();
    let lastMoved = -1;
    const result = await replayAll(sqs, dlq, source, {
      rate,
      dryRun,
      pollIntervalMs: io.pollIntervalMs ?? 1000,
      sleep: ctx.sleep,
      onProgress: ({ moved, toMove, status }) => {
        const total = toMove === undefined ? '?' : String(toMove);
        const pct = toMove !== undefined && toMove > 0 ? ` (${Math.floor((moved / toMove) * 100)}%)` : '';
        if (out.tty) progress.update(`moving ${moved}/${total}${pct} ${status.toLowerCase()}`);
        else if (moved !== lastMoved && status === 'RUNNING') out.say(`moved ${moved}/${total}`);
        lastMoved = moved;
      },
    });
    progress.done();
    if (result.status === 'DRY_RUN') {
      out.say(`dry run: would move ${result.toMove} message(s) from ${dlq.url} to ${source.url} with a message move task; nothing moved.`);
    } else if (result.status === 'EMPTY') {
      out.say('DLQ is empty; nothing to replay.');
    } else {
      out.say(`${result.status.toLowerCase()}: moved ${result.moved} of ${result.toMove} message(s) to ${source.url}${result.failureReason !== undefined ? ` (${result.failureReason})` : ''}`);
    }
    const ok = result.status === 'COMPLETED' || result.status === 'DRY_RUN' || result.status === 'EMPTY';
    return { exitCode: ok ? 0 : 1, json: result };
  } finally {
    sqs.destroy();
  }
}

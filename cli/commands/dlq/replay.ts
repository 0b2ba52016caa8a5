/** `bridge dlq replay`: the whole DLQ with a move task, or only the messages a selector matches. */
import { HANDLED_EVENT_TYPES } from '../../../shared/events';
import { connectionIdProblem } from '../../../shared/connections/model';
import { STACK_TENANT, tenantLabel } from '../../../shared/tenancy';
import { bool, duration, int, str, strs, type CommandContext, type Parsed } from '../../args';
import { UsageError } from '../../errors';
import type { LeafDef } from '../../command-spec';
import type { CliIo } from '../../io';
import type { CommandResult } from '../../result';
import { isSelective, replaySelected, type Selector } from './replay-selected';
import { replayAll, type MoveProgress } from './replay-all';
import type { QueueRef } from './queue';
import { QUEUE_OPTIONS, withSession, type DlqSession } from './shared';

const COMMAND = 'dlq replay';

/** Event types are checked against the one list the bridge handles (shared/events.ts). */
export function eventTypeOption(parsed: Parsed, name: string): string | undefined {
  const type = str(parsed, name);
  if (type !== undefined && !(HANDLED_EVENT_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`--${name} must be one of ${HANDLED_EVENT_TYPES.join(', ')}, got "${type}"`, parsed.command);
  }
  return type;
}

const STACK = tenantLabel(STACK_TENANT);

/** `--connection`: a connection id, or `stack` for the stack's own webhook's messages. */
function tenantOption(parsed: Parsed): string | undefined {
  const tenant = str(parsed, 'connection');
  if (tenant === undefined || tenant === STACK) return tenant;
  const problem = connectionIdProblem(tenant);
  if (problem !== undefined) throw new UsageError(`--connection must be a connection id or "${STACK}": ${problem}`, parsed.command);
  return tenant;
}

function selectorOf(parsed: Parsed): Selector {
  return {
    eventIds: strs(parsed, 'event-id'),
    type: eventTypeOption(parsed, 'type'),
    projectId: str(parsed, 'project'),
    olderThanMs: duration(parsed, 'older-than'),
    tenant: tenantOption(parsed),
  };
}

const SELECTORS = 'Selectors (all given must match; --event-id may repeat):';

export const DLQ_REPLAY: LeafDef = {
  summary: 'moves dead-lettered events back to the digest queue: all, or those a selector matches',
  synopsis: '[selectors] [--rate N] [--dry-run] [options]',
  description: `Without a selector, moves the whole DLQ back to the digest queue with an SQS message move task and
shows its progress until it ends. With selectors, moves only matching messages (receive → send with
the same body and attributes → delete once sent); the others stay in the DLQ untouched.
--connection replays one tenant's messages: a connection's (its id), or with "stack" those of the
stack's own webhook and schedules (every message that names no connection); \`dlq peek\` shows each
message's tenant. Without it, every tenant's.`,
  options: {
    connection: { value: 'ID', help: 'this tenant: a connection id, or "stack" for the stack\'s own', group: SELECTORS },
    'event-id': { value: 'ID', multiple: true, help: 'this event (repeatable)', group: SELECTORS },
    type: { value: 'T', help: HANDLED_EVENT_TYPES.join(' or '), group: SELECTORS },
    project: { value: 'P', help: 'this project id', group: SELECTORS },
    'older-than': { value: 'DURATION', help: 'received longer ago than this (90s, 30m, 2h, 1d)', group: SELECTORS },
    rate: { value: 'N', help: 'whole-DLQ move: at most N messages per second (1–500)' },
    'dry-run': { help: 'show what would move; move nothing' },
    ...QUEUE_OPTIONS,
  },
  run: dlqReplay,
};

async function dlqReplay(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  // Every flag is checked before anything is looked up, so a usage error never waits on AWS.
  const rate = int(parsed, 'rate', 1, 500);
  const selector = selectorOf(parsed);
  const dryRun = bool(parsed, 'dry-run');
  if (isSelective(selector) && rate !== undefined) throw new UsageError('--rate applies to a whole-DLQ replay (no selector)', COMMAND);
  return withSession(parsed, io, async (session) => {
    const dlq = await session.dlq();
    const source = await session.source();
    return isSelective(selector)
      ? replayMatching(session, dlq, source, selector, dryRun)
      : replayWhole(session, io, dlq, source, rate, dryRun);
  });
}

async function replayMatching(
  session: DlqSession,
  dlq: QueueRef,
  source: QueueRef,
  selector: Selector,
  dryRun: boolean,
): Promise<CommandResult> {
  const { ctx, sqs } = session;
  const out = ctx.out;
  const progress = out.progress();
  const result = await replaySelected(sqs, dlq, source, {
    selector,
    dryRun,
    now: ctx.now,
    onScanned: (scanned, depth) => progress.update(`scanned ${scanned}/${depth}`),
    onMessage: (message, outcome) => {
      progress.done();
      const label = { moved: 'moved', 'would-move': 'would move', failed: 'FAILED', 'not-deleted': 'sent, NOT deleted' }[outcome];
      out.say(
        `${label.padEnd(11)} ${message.eventId ?? message.messageId}  ${message.tenant}  ${message.type ?? '?'}  ${message.projectId ?? '-'}`,
      );
    },
  });
  progress.done();
  if (result.matched === 0) {
    out.say(`no DLQ message matches the selector (${result.scanned} scanned); nothing moved. See them with \`${ctx.hint('dlq peek')}\`.`);
    return { exitCode: 1, json: result };
  }
  if (dryRun) out.say(`dry run: ${result.matched} of ${result.scanned} DLQ messages match; nothing moved.`);
  else {
    out.say(`moved ${result.moved.length} of ${result.matched} matching (${result.scanned} scanned) to ${source.url}`);
    if (result.failed.length > 0)
      out.say(`${result.failed.length} could not be sent and stay in the DLQ: ${result.failed.map((f) => f.error).join('; ')}`);
    if (result.notDeleted.length > 0)
      out.say(`${result.notDeleted.length} were sent but not deleted from the DLQ; the digest de-duplicates them by event id.`);
  }
  return { exitCode: result.failed.length > 0 || result.notDeleted.length > 0 ? 1 : 0, json: result };
}

function progressPrinter(ctx: CommandContext): {
  onProgress: (p: MoveProgress) => void;
  done: () => void;
  last: () => MoveProgress | undefined;
} {
  const progress = ctx.out.progress();
  let last: MoveProgress | undefined;
  return {
    onProgress: (p) => {
      const total = p.toMove === undefined ? '?' : String(p.toMove);
      const pct = p.toMove !== undefined && p.toMove > 0 ? ` (${Math.floor((p.moved / p.toMove) * 100)}%)` : '';
      if (ctx.out.tty) progress.update(`moving ${p.moved}/${total}${pct} ${p.status.toLowerCase()}`);
      else if (p.moved !== last?.moved && p.status === 'RUNNING') ctx.out.say(`moved ${p.moved}/${total}`);
      last = p;
    },
    done: () => progress.done(),
    last: () => last,
  };
}

async function replayWhole(
  session: DlqSession,
  io: CliIo,
  dlq: QueueRef,
  source: QueueRef,
  rate: number | undefined,
  dryRun: boolean,
): Promise<CommandResult> {
  const { ctx, sqs } = session;
  const printer = progressPrinter(ctx);
  const interrupt = new AbortController();
  const stopListening = io.onInterrupt?.(() => interrupt.abort()) ?? (() => undefined);
  try {
    const result = await replayAll(sqs, dlq, source, {
      rate,
      dryRun,
      pollIntervalMs: io.pollIntervalMs ?? 1000,
      sleep: ctx.sleep,
      onProgress: printer.onProgress,
      signal: interrupt.signal,
    });
    printer.done();
    if (result.status === 'INTERRUPTED') {
      const moved = printer.last();
      io.stderr.write(
        `interrupted: the message move task is still running on SQS (moved ${moved?.moved ?? 0} of ${moved?.toMove ?? '?'} so far) and keeps moving messages.\n` +
          `  stop it with: ${ctx.hint('dlq cancel')}\n  follow it with: ${ctx.hint('dlq stats')}\n`,
      );
      return { exitCode: 130, json: result };
    }
    if (result.status === 'DRY_RUN')
      ctx.out.say(
        `dry run: would move ${result.toMove} message(s) from ${dlq.url} to ${source.url} with a message move task; nothing moved.`,
      );
    else if (result.status === 'EMPTY') ctx.out.say('DLQ is empty; nothing to replay.');
    else
      ctx.out.say(
        `${result.status.toLowerCase()}: moved ${result.moved} of ${result.toMove} message(s) to ${source.url}${result.failureReason !== undefined ? ` (${result.failureReason})` : ''}`,
      );
    const ok = result.status === 'COMPLETED' || result.status === 'DRY_RUN' || result.status === 'EMPTY';
    return { exitCode: ok ? 0 : 1, json: result };
  } finally {
    stopListening();
  }
}

/** `bridge dlq peek`: the DLQ's messages and why each failed, without consuming them. */
import { int } from '../../args';
import type { LeafDef, Parsed } from '../../command-spec';
import type { CliIo } from '../../io';
import type { CommandResult } from '../../result';
import { peekDlq } from './peek-dlq';
import { printMessages, QUEUE_OPTIONS, withSession } from './shared';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../../../shared/contracts';
import { dynamoClient } from '../../aws';
import type { CommandContext } from '../../args';
import type { DlqMessage } from './queue';
import { STACK_OUTPUTS } from '../../aws';

const STACK_TABLE_OUTPUT = STACK_OUTPUTS.tableName;

export const DLQ_PEEK: LeafDef = {
  summary: 'the DLQ messages and why each failed, without consuming them',
  synopsis: '[--max N] [options]',
  description: `Shows DLQ messages (event id, tenant, type, project, age since received, receive count) without consuming
them: they are hidden for a few seconds while read and made visible again at once.`,
  options: { max: { value: 'N', help: 'at most N messages (default 10)' }, ...QUEUE_OPTIONS },
  run: dlqPeek,
};

async function dlqPeek(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const max = int(parsed, 'max', 1, 1000) ?? 10;
  return withSession(parsed, io, async ({ ctx, sqs, dlq }) => {
    const queue = await dlq();
    const progress = ctx.out.progress();
    progress.update('reading the DLQ…');
    const { depth, messages } = await peekDlq(sqs, queue, { max, now: ctx.now });
    await addLastFailures(ctx, messages);
    progress.done();
    if (messages.length === 0) ctx.out.say(`DLQ is empty (${queue.url})`);
    else {
      printMessages(ctx.out, messages);
      ctx.out.say(`${messages.length} shown of ${depth.visible} visible (${depth.inFlight} in flight); nothing was consumed.`);
    }
    return { exitCode: 0, json: { dlq: queue.url, visible: depth.visible, inFlight: depth.inFlight, messages } };
  });
}

/**
 * The digest records each failure on the event's claim (`digest#<event id>`, attribute last_failure) as
 * it happens, so peek can say why without adding to the message's receive count. Best effort: a
 * message without an event id, or a table that can't be read, keeps what the message itself says.
 */
async function addLastFailures(ctx: CommandContext, messages: DlqMessage[]): Promise<void> {
  const dynamo = dynamoClient(ctx.settings);
  try {
    const tableName = ctx.local !== undefined ? ctx.local.tableName : (await ctx.stack.load()).outputs[STACK_TABLE_OUTPUT];
    if (tableName === undefined) return;
    await Promise.all(
      messages
        .filter((m) => m.reason === undefined && m.eventId !== undefined)
        .map(async (m) => {
          const key = { [TABLE.partitionKey]: { S: `${TABLE.prefixes.digest}${m.eventId ?? ''}` } };
          const item = (await dynamo.send(new GetItemCommand({ TableName: tableName, Key: key }))).Item;
          const failure = item?.[TABLE.lastFailureAttribute]?.S;
          const attempts = Number(item?.[TABLE.attemptsAttribute]?.N);
          if (failure !== undefined) m.reason = failure;
          if (Number.isFinite(attempts) && attempts > 0) m.receiveCount = attempts;
        }),
    );
  } catch {
    // The reasons are a help, not the point of peek: show the messages anyway.
  } finally {
    dynamo.destroy();
  }
}

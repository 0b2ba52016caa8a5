/** `bridge dlq peek`: the DLQ's messages and why each failed, without consuming them. */
import { int } from '../../args';
import type { CliIo } from '../../io';
import type { CommandResult } from '../../result';
import { peekDlq } from './peek-dlq';
import { parseSub, printMessages, withSession } from './shared';

export async function dlqPeek(argv: readonly string[], io: CliIo): Promise<CommandResult> {
  const parsed = parseSub('peek', argv, { max: { type: 'string' } });
  const max = int(parsed, 'max', 1, 1000) ?? 10;
  return withSession(parsed, io, async ({ ctx, sqs, dlq }) => {
    const queue = await dlq();
    const progress = ctx.out.progress();
    progress.update('reading the DLQ…');
    const { depth, messages } = await peekDlq(sqs, queue, { max, now: ctx.now });
    progress.done();
    if (messages.length === 0) ctx.out.say(`DLQ is empty (${queue.url})`);
    else {
      printMessages(ctx.out, messages);
      ctx.out.say(`${messages.length} shown of ${depth.visible} visible (${depth.inFlight} in flight); nothing was consumed.`);
    }
    return { exitCode: 0, json: { dlq: queue.url, visible: depth.visible, inFlight: depth.inFlight, messages } };
  });
}

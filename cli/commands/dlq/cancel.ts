/** `bridge dlq cancel`: stops the DLQ's running message move task (CancelMessageMoveTask). */
import { CancelMessageMoveTaskCommand, ListMessageMoveTasksCommand } from '@aws-sdk/client-sqs';
import { aws, CliError } from '../../errors';
import type { LeafDef, Parsed } from '../../command-spec';
import type { CliIo } from '../../io';
import type { CommandResult } from '../../result';
import { ctxFor, queueDepth } from './queue';
import { QUEUE_OPTIONS, withSession } from './shared';

export const DLQ_CANCEL: LeafDef = {
  summary: "stops the DLQ's running message move task",
  description: `Stops the DLQ's running message move task (started by \`npx bridge dlq replay\` without a selector).
Messages already moved stay moved; the rest stay in the DLQ. Exit 1 when no task is running.`,
  options: QUEUE_OPTIONS,
  run: dlqCancel,
};

async function dlqCancel(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  return withSession(parsed, io, async ({ ctx, sqs, dlq }) => {
    const queue = await dlq();
    const { arn } = await queueDepth(sqs, queue);
    const listed = await aws(ctxFor(queue), () => sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn, MaxResults: 10 })));
    const running = (listed.Results ?? []).find((task) => task.Status === 'RUNNING' && task.TaskHandle !== undefined);
    if (running?.TaskHandle === undefined) {
      throw new CliError(
        `no message move task is running for ${queue.url}`,
        `nothing to cancel; \`${ctx.hint('dlq stats')}\` shows the DLQ`,
        'no_task',
      );
    }
    const handle = running.TaskHandle;
    const cancelled = await aws(ctxFor(queue), () => sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle: handle })));
    const moved = cancelled.ApproximateNumberOfMessagesMoved ?? running.ApproximateNumberOfMessagesMoved ?? 0;
    ctx.out.say(`cancelled the move task; ${moved} message(s) had moved, the rest stay in the DLQ.`);
    return { exitCode: 0, json: { cancelled: true, taskHandle: handle, moved, dlq: queue.url } };
  });
}

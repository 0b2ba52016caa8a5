/** `bridge dlq stats`: depths of the DLQ and the digest queue. */
import type { LeafDef, Parsed } from '../../command-spec';
import type { CliIo } from '../../io';
import type { CommandResult } from '../../result';
import { queueDepth, type QueueDepth } from './queue';
import { QUEUE_OPTIONS, withSession } from './shared';

function line(label: string, d: QueueDepth): string {
  return `${label.padEnd(6)} visible ${d.visible}  in flight ${d.inFlight}  delayed ${d.delayed}  ${d.url}`;
}

function strip(d: QueueDepth): Omit<QueueDepth, 'arn'> {
  return { url: d.url, visible: d.visible, inFlight: d.inFlight, delayed: d.delayed };
}

export const DLQ_STATS: LeafDef = {
  summary: 'how many messages wait in the DLQ and the digest queue',
  description: `Shows how many messages wait in the DLQ and the digest queue (visible / in flight / delayed).
The age of the oldest message is a CloudWatch metric only; \`npx bridge dlq peek\` shows each message's age.`,
  options: QUEUE_OPTIONS,
  run: dlqStats,
};

async function dlqStats(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  return withSession(parsed, io, async ({ ctx, sqs, dlq, source }) => {
    const dlqDepth = await queueDepth(sqs, await dlq());
    const sourceDepth = await queueDepth(sqs, await source());
    ctx.out.say(line('DLQ', dlqDepth));
    ctx.out.say(line('queue', sourceDepth));
    if (dlqDepth.visible + dlqDepth.inFlight > 0) {
      ctx.out.say(`Inspect with \`${ctx.hint('dlq peek')}\`; move back with \`${ctx.hint('dlq replay')}\`.`);
    }
    return { exitCode: 0, json: { dlq: strip(dlqDepth), queue: strip(sourceDepth) } };
  });
}

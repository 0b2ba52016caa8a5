/** What every `bridge dlq` sub-command needs: its options, the queues it works on, a table printer. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { buildContext, formatAge, str, AWS_OPTIONS, type CommandContext, type Parsed } from '../../args';
import { endpointFor, sqsClient, STACK_OUTPUTS } from '../../aws';
import type { OptionDefs } from '../../command-spec';
import type { CliIo, Output } from '../../io';
import { needLocal } from '../../ready-file';
import type { DlqMessage, QueueRef } from './queue';

const QUEUES = 'Queues:';

/** Options every dlq sub-command takes: where the queues are. */
export const QUEUE_OPTIONS: OptionDefs = {
  'queue-url': { value: 'URL', help: 'the digest queue, instead of the stack output QueueUrl', group: QUEUES },
  'dlq-url': { value: 'URL', help: 'the DLQ, instead of the stack output DlqUrl', group: QUEUES },
  endpoint: { value: 'URL', help: 'SQS endpoint (e.g. a local SQS-compatible server)', group: QUEUES },
  ...AWS_OPTIONS,
};

export interface DlqSession {
  parsed: Parsed;
  ctx: CommandContext;
  sqs: SQSClient;
  dlq: () => Promise<QueueRef>;
  source: () => Promise<QueueRef>;
}

/** Opens the SQS client and the queue lookups of a sub-command; call `sqs.destroy()` when done. */
export async function openSession(parsed: Parsed, io: CliIo): Promise<DlqSession> {
  const endpoint = str(parsed, 'endpoint');
  const ctx = await buildContext(parsed, io, endpoint !== undefined ? { sqs: endpoint } : {});
  const sqs = sqsClient(ctx.settings);
  const sqsEndpoint = endpointFor(ctx.settings, 'sqs');
  const resolve = async (flag: string, local: 'queueUrl' | 'dlqUrl', output: string): Promise<QueueRef> => {
    const given = str(parsed, flag);
    if (given !== undefined) return { url: given, endpoint: sqsEndpoint };
    if (ctx.local !== undefined) return { url: needLocal(ctx.local, ctx.local[local], local), endpoint: sqsEndpoint };
    return { url: await ctx.stack.require(output, `--${flag}`), endpoint: sqsEndpoint };
  };
  return {
    parsed,
    ctx,
    sqs,
    dlq: () => resolve('dlq-url', 'dlqUrl', STACK_OUTPUTS.dlqUrl),
    source: () => resolve('queue-url', 'queueUrl', STACK_OUTPUTS.queueUrl),
  };
}

/** Runs a sub-command body with a session, always closing the SQS client. */
export async function withSession<T>(parsed: Parsed, io: CliIo, body: (session: DlqSession) => Promise<T>): Promise<T> {
  const session = await openSession(parsed, io);
  try {
    return await body(session);
  } finally {
    session.sqs.destroy();
  }
}

function row(cells: string[], widths: number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    .join('  ')
    .trimEnd();
}

export function printMessages(out: Output, messages: DlqMessage[]): void {
  const header = ['EVENT ID', 'TENANT', 'TYPE', 'PROJECT', 'AGE', 'ATTEMPTS', 'LAST FAILURE'];
  const rows = messages.map((m) => [
    m.eventId ?? '?',
    m.tenant,
    m.type ?? '?',
    m.projectId ?? '-',
    m.ageMs === undefined ? '?' : formatAge(m.ageMs),
    m.receiveCount === undefined ? '?' : String(m.receiveCount),
    m.reason ?? '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  out.say(row(header, widths));
  for (const r of rows) out.say(row(r, widths));
}

/**
 * `bridge dlq stats | peek | replay | cancel`: look at and drain the digest queue's dead-letter
 * queue. Each sub-command lives in cli/commands/dlq/.
 */
import { suggest } from '../args';
import { UsageError } from '../errors';
import type { CliIo } from '../io';
import type { CommandResult } from '../result';
import { dlqCancel } from './dlq/cancel';
import { dlqPeek } from './dlq/peek';
import { dlqReplay } from './dlq/replay';
import { dlqStats } from './dlq/stats';

export const DLQ_SUBCOMMANDS: Record<string, (argv: readonly string[], io: CliIo) => Promise<CommandResult>> = {
  stats: dlqStats,
  peek: dlqPeek,
  replay: dlqReplay,
  cancel: dlqCancel,
};

export async function dlqCommand(argv: readonly string[], io: CliIo): Promise<CommandResult> {
  const sub = argv[0];
  const names = Object.keys(DLQ_SUBCOMMANDS).join(', ');
  if (sub === undefined) throw new UsageError(`dlq needs a subcommand: ${names}`, 'dlq');
  if (sub.startsWith('-')) throw new UsageError(`unknown dlq option ${sub}; give a subcommand first (${names})`, 'dlq');
  const command = DLQ_SUBCOMMANDS[sub];
  if (command === undefined) throw new UsageError(`unknown dlq subcommand "${sub}"${suggest(sub, Object.keys(DLQ_SUBCOMMANDS))}`, 'dlq');
  return command(argv.slice(1), io);
}

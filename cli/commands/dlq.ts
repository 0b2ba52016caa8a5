/**
 * `bridge dlq stats | peek | replay | cancel`: look at and drain the digest queue's dead-letter
 * queue. Each sub-command lives in cli/commands/dlq/.
 */
import type { GroupDef } from '../command-spec';
import { DLQ_CANCEL } from './dlq/cancel';
import { DLQ_PEEK } from './dlq/peek';
import { DLQ_REPLAY } from './dlq/replay';
import { DLQ_STATS } from './dlq/stats';

export const DLQ: GroupDef = {
  summary: 'look at / move back dead-lettered digest events',
  commands: { stats: DLQ_STATS, peek: DLQ_PEEK, replay: DLQ_REPLAY, cancel: DLQ_CANCEL },
};

/**
 * The table of queued message kinds holds by the compiler: a kind without its entry, or a queue without
 * the handler of a kind it carries, fails `tsc` (the `@ts-expect-error` lines below fail it if not).
 */
import { describe, expect, it } from 'vitest';
import { eachAlone } from '../../shared/queue-work';
import type { QueueHandlers } from '../../shared/worker/batch';
import { MESSAGE_KIND_NAMES, MESSAGE_KINDS, type KindSpecs, type QueueName } from '../../shared/worker/kinds';
import { COMMAND_QUEUE, DIGEST_QUEUE, type DigestQueueDeps } from '../../shared/worker/queues';

const label = () => ({ id: 'x', type: 'x' });
const ignore = eachAlone(() => Promise.resolve('ignored' as const));

describe('the kind table', () => {
  it('refuses a kind without its entry', () => {
    // @ts-expect-error quiet_catch_up has no entry
    const specs: KindSpecs = {
      'run.completed': { queue: 'digest', label },
      'draft.ready': { queue: 'digest', label },
      slack_command: { queue: 'commands', label },
      slack_home: { queue: 'commands', label },
      weekly_sweep: { queue: 'digest', label },
      digest_thread: { queue: 'digest', label },
    };
    expect(Object.keys(specs)).toHaveLength(MESSAGE_KIND_NAMES.length - 1);
  });

  it("refuses a queue without the handler of a kind it carries, and a handler of another queue's kind", () => {
    // @ts-expect-error the digest queue carries quiet_catch_up, which has no handler here
    const missing: QueueHandlers<'digest', DigestQueueDeps> = { 'run.completed': ignore, 'draft.ready': ignore, weekly_sweep: ignore };
    const foreign: QueueHandlers<'digest', DigestQueueDeps> = {
      ...DIGEST_QUEUE.handlers,
      // @ts-expect-error slack_command is the commands queue's kind
      slack_command: ignore,
    };
    expect(Object.keys(missing)).toHaveLength(3);
    expect(Object.keys(foreign)).toContain('slack_command');
  });

  it("each queue's handlers are exactly the kinds the table puts on it", () => {
    const kindsOf = (queue: QueueName) => MESSAGE_KIND_NAMES.filter((kind) => MESSAGE_KINDS[kind].queue === queue).sort();
    expect(Object.keys(DIGEST_QUEUE.handlers).sort()).toEqual(kindsOf('digest'));
    expect(Object.keys(COMMAND_QUEUE.handlers).sort()).toEqual(kindsOf('commands'));
    expect([...kindsOf('digest'), ...kindsOf('commands')].sort()).toEqual([...MESSAGE_KIND_NAMES].sort());
  });
});

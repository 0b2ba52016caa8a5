/** A digest's thread follow-up (shared/digest/thread.ts): its message on the queue, its delay and its tenant. */
import { describe, expect, it } from 'vitest';
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import { followUpFits, handoffDelaySeconds, threadFollowUpBody, threadHandoff, type ThreadFollowUp } from '../../shared/digest/thread';
import type { WebhookEvent } from '../../shared/events';
import type { RequeuedMessage } from '../../shared/ports';
import { parseQueuedMessage } from '../../shared/worker/parse';

const event: WebhookEvent = {
  id: 'evt_0001',
  type: 'run.completed',
  created_at: '2026-11-27T09:00:00Z',
  data: { project_id: 'proj_1', run_id: 'run_1', status: 'completed', answers: 10 },
};
const followUp: ThreadFollowUp = {
  thread: {
    event,
    channel: 'C0HOME',
    postChannel: 'C0HOME',
    threadTs: '1764234000.000100',
    eventType: 'visibility_digest',
    replies: [
      { text: 'What changed', blocks: [{ type: 'section' }] },
      { text: 'Engines', blocks: [] },
    ],
  },
  attempt: 2,
};

describe('the digest_thread message', () => {
  it('parses back to the follow-up it was made from, with its connection', () => {
    const parsed = parseQueuedMessage(JSON.stringify(threadFollowUpBody(followUp, 'client-a')));
    expect(parsed.kind).toBe('message');
    if (parsed.kind !== 'message') return;
    expect(parsed.message).toEqual({ kind: QUEUE_MESSAGE_KINDS.digestThread, payload: { ...followUp, event, connection: 'client-a' } });
    // `bridge dlq` reads whose it is and which event, as for any event message.
    expect(parsed.hints).toMatchObject({ eventId: event.id, connection: 'client-a', type: QUEUE_MESSAGE_KINDS.digestThread });
  });

  it.each([
    ['without its event', { event: undefined }],
    ['with a connection that is not a connection id', { connection: '../other' }],
    [
      'whose replies are not Slack messages',
      { thread: { ...(threadFollowUpBody(followUp, undefined)['thread'] as object), replies: ['x'] } },
    ],
    ['without its attempt', { thread: { ...(threadFollowUpBody(followUp, undefined)['thread'] as object), attempt: 0 } }],
  ])('is unusable (quarantined with its reason, never posted) %s', (_why, change) => {
    const parsed = parseQueuedMessage(JSON.stringify({ ...threadFollowUpBody(followUp, undefined), ...change }));
    expect(parsed.kind).toBe('unusable');
  });
});

describe('threadHandoff', () => {
  const sent = (connection: string | undefined) => {
    const messages: { message: RequeuedMessage; delaySeconds: number }[] = [];
    const queue = {
      requeue: (message: RequeuedMessage, delaySeconds: number) => Promise.resolve(void messages.push({ message, delaySeconds })),
    };
    return { messages, handoff: threadHandoff(queue, connection) };
  };

  it("sends a connection's follow-up in that connection's group, as ingest sends its events", async () => {
    const { messages, handoff } = sent('client-a');
    await handoff.send(followUp, 1);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.message.groupId).toBe('client-a');
    expect(messages[0]?.message.attributes).toMatchObject({
      tenant: 'client-a',
      event_id: event.id,
      type: QUEUE_MESSAGE_KINDS.digestThread,
    });
    expect(messages[0]?.delaySeconds).toBe(1);
  });

  it("sends the stack's own in the stack's group", async () => {
    const { messages, handoff } = sent(undefined);
    await handoff.send(followUp, 2);
    expect(messages[0]?.message.groupId).toBe('stack');
    expect(JSON.parse(messages[0]?.message.body ?? '{}')).not.toHaveProperty('connection');
  });
});

describe('handoffDelaySeconds', () => {
  it("is the wait's whole seconds, at least one: the follow-up comes back just before its slot", () => {
    expect(handoffDelaySeconds(1_100)).toBe(1);
    expect(handoffDelaySeconds(300)).toBe(1);
    expect(handoffDelaySeconds(3_900)).toBe(3);
  });

  it("stays within SQS's 900 s DelaySeconds", () => {
    expect(handoffDelaySeconds(5_000_000)).toBe(900);
  });
});

describe('followUpFits', () => {
  it('hands a thread on only when its follow-up fits in one queue message (1 MiB); a larger one is posted in the invocation', () => {
    expect(followUpFits(followUp.thread)).toBe(true);
    const reply = (chars: number) => ({ text: 'x'.repeat(chars), blocks: [] });
    expect(followUpFits({ event, replies: [reply(500_000), reply(500_000)] })).toBe(true);
    expect(followUpFits({ event, replies: [reply(520_000), reply(520_000)] })).toBe(false);
    // Bytes, not characters: Slack text is mostly not ASCII-only.
    expect(followUpFits({ event, replies: [{ text: '€'.repeat(400_000), blocks: [] }] })).toBe(false);
  });
});

// Fair queues (SQS, 2025): a standard queue whose messages carry a MessageGroupId gives a tenant with a
// backlog no head start over the others. AWS marks a tenant "noisy" when it holds a large share of the
// messages in flight (over 10 % and at least 30) or of the consumers' recent processing time (over 10 %),
// then returns the quiet tenants' messages first, and among noisy tenants the one with the fewest in
// flight first. This server keeps one rule that has the same effect where it matters, with nothing to
// tune: among the visible messages, a receive takes from the group with the fewest messages in flight
// (counting those it has already taken), ties going to the message sent first. A message without a
// group is a tenant of its own with nothing in flight, as in AWS, so a queue without groups is received
// in send order exactly as before. Unlike AWS it reorders even when no tenant is noisy; with no backlog
// every visible message is taken anyway, so only a backlog ever sees the difference.
import type { StoredMessage } from './queue';

/** Which group (tenant) a message belongs to; undefined: a tenant of its own. */
type GroupOf = (message: StoredMessage) => string | undefined;

const groupOfMessage: GroupOf = (message) => message.messageGroupId;
const noGroups: GroupOf = () => undefined;

/**
 * The visible messages of `messages` in the order a receive takes them. Lazy: after each message the
 * caller either took it (it is still in `messages`: its group now has one more in flight) or moved it
 * away (a redrive to the dead-letter queue), and the next pick accounts for that.
 */
export function* receiveOrder(messages: ReadonlyMap<string, StoredMessage>, now: number, fair: boolean): Generator<StoredMessage> {
  const groupOf = fair ? groupOfMessage : noGroups;
  const inFlight = new Map<string, number>();
  /** Each group's visible messages, in send order; ungrouped messages all wait in one line with nothing in flight. */
  const waiting = new Map<string | undefined, StoredMessage[]>();
  const sentOrder = new Map<StoredMessage, number>();
  let position = 0;
  for (const message of messages.values()) {
    const group = groupOf(message);
    if (message.visibleAt > now) {
      if (message.inFlight && group !== undefined) inFlight.set(group, (inFlight.get(group) ?? 0) + 1);
      continue;
    }
    sentOrder.set(message, position++);
    const line = waiting.get(group);
    if (line === undefined) waiting.set(group, [message]);
    else line.push(message);
  }
  const heads = new Map([...waiting].map(([group]) => [group, 0]));
  for (;;) {
    let best: { group: string | undefined; message: StoredMessage; load: number; order: number } | undefined;
    for (const [group, index] of heads) {
      const message = waiting.get(group)?.[index];
      if (message === undefined) continue;
      const load = group === undefined ? 0 : (inFlight.get(group) ?? 0);
      const order = sentOrder.get(message) ?? 0;
      if (best === undefined || load < best.load || (load === best.load && order < best.order)) best = { group, message, load, order };
    }
    if (best === undefined) return;
    heads.set(best.group, (heads.get(best.group) ?? 0) + 1);
    yield best.message;
    const taken = messages.get(best.message.messageId) === best.message && best.message.inFlight;
    if (taken && best.group !== undefined) inFlight.set(best.group, (inFlight.get(best.group) ?? 0) + 1);
  }
}

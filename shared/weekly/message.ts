/** The weekly sweep's queue message (its one parser; the digest's queue parser and `bridge trigger weekly` share it). */
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import type { WeeklySweepMessage } from './ports';

/** Channel ids and names are short; anything longer is not a channel. */
const MAX_CHANNEL = 100;

export function weeklySweepMessage(options: { channel?: string | undefined; now?: boolean | undefined } = {}): WeeklySweepMessage {
  return {
    kind: QUEUE_MESSAGE_KINDS.weeklySweep,
    ...(options.channel === undefined ? {} : { channel: options.channel }),
    ...(options.now === true ? { now: true as const } : {}),
  };
}

/** The message, or null when a field has the wrong shape. */
export function parseWeeklySweep(body: Readonly<Record<string, unknown>>): WeeklySweepMessage | null {
  const channel = body['channel'];
  const now = body['now'];
  if (channel !== undefined && (typeof channel !== 'string' || channel.trim() === '' || channel.length > MAX_CHANNEL)) return null;
  if (now !== undefined && now !== true) return null;
  return weeklySweepMessage({ channel: channel?.trim(), now: now === true });
}

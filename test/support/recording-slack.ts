/**
 * A SlackPoster double that keeps every message as Slack would (channel, ts, thread, metadata), so a test
 * counts what reached each channel; `findPosted` and `countReplies` read them back as conversations.history
 * and conversations.replies do. The local Slack server does the same over HTTP (test/integration).
 */
import type { SlackMessage, SlackMessageMetadata, SlackPostOptions, SlackPostResult, SlackPoster } from '../../shared/ports';

export interface RecordedPost {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  text: string;
  blocks: unknown[];
  metadata: SlackMessageMetadata | undefined;
}

export class RecordingSlack implements SlackPoster {
  readonly posts: RecordedPost[] = [];
  private sequence = 0;

  /** `now`: the test's clock, for the messages' ts. */
  constructor(private readonly now: () => number) {}

  post(channel: string, message: SlackMessage, options: SlackPostOptions = {}): Promise<SlackPostResult> {
    const ts = `${Math.floor(this.now() / 1000)}.${String(++this.sequence).padStart(6, '0')}`;
    this.posts.push({
      channel,
      ts,
      threadTs: options.threadTs,
      text: message.text,
      blocks: structuredClone(message.blocks),
      metadata: options.metadata === undefined ? undefined : structuredClone(options.metadata),
    });
    return Promise.resolve({ ts, channel });
  }

  findPosted(channel: string, eventId: string, oldestEpochSeconds: number): Promise<string | undefined> {
    const found = this.posts.find(
      (p) =>
        p.channel === channel &&
        p.threadTs === undefined &&
        Number(p.ts) >= oldestEpochSeconds &&
        p.metadata?.event_payload['event_id'] === eventId,
    );
    return Promise.resolve(found?.ts);
  }

  countReplies(channel: string, threadTs: string, eventId: string): Promise<number> {
    return Promise.resolve(
      this.posts.filter((p) => p.channel === channel && p.threadTs === threadTs && p.metadata?.event_payload['event_id'] === eventId)
        .length,
    );
  }

  /** Top-level messages of a channel, oldest first. */
  topLevel(channel: string): RecordedPost[] {
    return this.posts.filter((p) => p.channel === channel && p.threadTs === undefined);
  }
}

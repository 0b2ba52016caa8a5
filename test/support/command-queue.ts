/** A DeferredCommandQueue double that keeps what was sent, as the commands queue would (JSON round trip). */
import type { DeferredCommandQueue, DeferredSlackCommand } from '../../shared/slack-app/ports';

export class RecordingCommandQueue implements DeferredCommandQueue {
  readonly sent: unknown[] = [];

  send(message: DeferredSlackCommand): Promise<void> {
    this.sent.push(JSON.parse(JSON.stringify(message)) as unknown);
    return Promise.resolve();
  }
}

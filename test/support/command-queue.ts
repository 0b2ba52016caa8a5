/** A DeferredCommandQueue double that keeps what was sent, as the commands queue would (JSON round trip). */
import type { DeferredCommandQueue, DeferredSlackCommand } from '../../shared/slack-app/ports';
import type { HomeRequest } from '../../shared/slack-app/home/ports';

export class RecordingCommandQueue implements DeferredCommandQueue {
  readonly sent: unknown[] = [];

  send(message: DeferredSlackCommand | HomeRequest): Promise<void> {
    this.sent.push(JSON.parse(JSON.stringify(message)) as unknown);
    return Promise.resolve();
  }
}

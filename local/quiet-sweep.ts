/**
 * The local stand-in for the stack's quiet-hours schedule (infra/quiet-hours.ts): puts a
 * `quiet_catch_up` message on the local digest queue on an interval, so the digest handler's poller
 * runs the catch-up sweep exactly as deployed (the schedule sends the same message every 5 minutes).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { QUEUE_MESSAGE_KINDS } from '../shared/contracts';

export interface QuietSweepTimer {
  /** Sends one sweep message now (what the timer does on each tick). */
  sweepNow(): Promise<void>;
  close(): void;
}

export function startQuietSweep(options: {
  client: SQSClient;
  queueUrl: string;
  intervalMs: number;
  onError: (error: unknown) => void;
}): QuietSweepTimer {
  const sweepNow = async (): Promise<void> => {
    await options.client.send(
      new SendMessageCommand({ QueueUrl: options.queueUrl, MessageBody: JSON.stringify({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp }) }),
    );
  };
  const timer = setInterval(() => void sweepNow().catch(options.onError), options.intervalMs);
  // The timer never keeps the process alive on its own.
  timer.unref();
  return { sweepNow, close: () => clearInterval(timer) };
}

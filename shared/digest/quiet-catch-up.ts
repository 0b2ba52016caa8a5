/** The queue's `quiet_catch_up` kind (the stack's 5-minute schedule): one sweep of the held digests (./held-digests.ts). */
import type { QUEUE_MESSAGE_KINDS } from '../contracts';
import { eachAlone, type KindHandler } from '../queue-work';
import { catchUpSweep } from './held-digests';

export interface QuietCatchUpMessage {
  kind: typeof QUEUE_MESSAGE_KINDS.quietCatchUp;
}

/** The catch-up's deps; without a quiet-hours store the message is acknowledged and does nothing. */
export type CatchUpSweepDeps = Parameters<typeof catchUpSweep>[0];

export const catchUpHeldDigests: KindHandler<QuietCatchUpMessage, CatchUpSweepDeps> = eachAlone((_message, deps) => catchUpSweep(deps));

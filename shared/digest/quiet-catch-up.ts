/** The queue's `quiet_catch_up` kind (the stack's 5-minute schedule): one sweep of the held digests (./held-digests.ts). */
import type { QUEUE_MESSAGE_KINDS } from '../contracts';
import { eachAlone, type KindHandler } from '../queue-work';
import { catchUpSweep } from './held-digests';

export interface QuietCatchUpMessage {
  kind: typeof QUEUE_MESSAGE_KINDS.quietCatchUp;
}

/** The catch-up's deps; without a quiet-hours store the message is acknowledged and does nothing. */
export type CatchUpSweepDeps = Parameters<typeof catchUpSweep>[0] & {
  /** Each active connection's catch-up (its held digests, under its tenant prefix); none = the stack's alone. */
  tenants?: (() => Promise<Parameters<typeof catchUpSweep>[0][]>) | undefined;
};

export const catchUpHeldDigests: KindHandler<QuietCatchUpMessage, CatchUpSweepDeps> = eachAlone(async (_message, deps) => {
  const swept = await catchUpSweep(deps);
  // Each connection's held digests after the stack's: one tenant's catch-up posts only its own runs.
  for (const own of (await deps.tenants?.()) ?? []) await catchUpSweep(own);
  return swept;
});

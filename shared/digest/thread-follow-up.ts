/**
 * A `digest_thread` record: the next replies of a digest's thread (./thread.ts), under the channel's
 * claim. Its first reply waits for its slot at most the pace budget, as a digest's first post does (past
 * it the record is sent again, ./worker/sqs.ts); a later one not due at once goes to the next follow-up.
 */
import { PacedChannel } from '../pacing';
import { eachAlone, type KindHandler, type RecordResult } from '../queue-work';
import type { DigestDeps } from './deps';
import { ClaimBusyError } from './failures';
import { failureText, reconcileWithSlack, releaseQuietly } from './fan-out';
import { postReplies, type ThreadFollowUpPayload } from './thread';

export const continueThreads: KindHandler<ThreadFollowUpPayload, DigestDeps> = eachAlone((payload, deps) => continueThread(payload, deps));

async function continueThread({ thread, attempt }: ThreadFollowUpPayload, deps: DigestDeps): Promise<RecordResult> {
  const { event, channel } = thread;
  // The slot before the claim, as for a digest: a follow-up sent back for the pace leaves the claim as it was.
  const paced = new PacedChannel(channel, deps);
  await paced.reserveFirst(1);
  const claim = await deps.store.claimChannel(event.id, channel, deps.clock.now());
  if (claim.status === 'busy') throw new ClaimBusyError(claim.retryAfterSeconds);
  if (claim.status === 'done') {
    deps.log.info('thread already complete; nothing posted', { eventId: event.id, channel });
    return 'duplicate';
  }
  try {
    const progress = {
      ...claim.progress,
      channel: claim.progress.channel ?? thread.postChannel,
      mainTs: claim.progress.mainTs ?? thread.threadTs,
    };
    // Not the attempt the sender released the claim for: a holder died between a post and its progress write, or this is a copy.
    if (claim.attempt !== attempt) await reconcileWithSlack(event, claim, channel, progress, deps);
    const outcome = await postReplies(thread, claim, progress, paced, deps, { handoff: true, slotReserved: true });
    if (outcome === 'done') {
      await deps.store.finishChannel(event.id, channel, claim.token);
      deps.log.info('digest thread complete', { eventId: event.id, channel, replies: thread.replies.length });
      return 'posted';
    }
    await deps.store.releaseChannel(event.id, channel, claim.token);
    await outcome.send();
    return 'posted';
  } catch (error) {
    await releaseQuietly(() => deps.store.releaseChannel(event.id, channel, claim.token, failureText(error)), event, deps);
    throw error;
  }
}

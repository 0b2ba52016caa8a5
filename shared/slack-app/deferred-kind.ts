/** The queue's `slack_command` kind (the commands queue): a deferred `/visibility` command, answered via its response_url. */
import { SLACK_APP_METRICS } from '../contracts';
import { Unavailable } from '../errors';
import { describeError } from '../observability';
import { eachAlone, type KindHandler, type RecordResult, type WorkLabel } from '../queue-work';
import type { DeferredDeps, DeferredSlackCommand } from './ports';
import { runDeferredCommand } from './service';

export const answerDeferredCommands: KindHandler<DeferredSlackCommand, DeferredDeps> = eachAlone(answerCommand);

/** Slack accepts answers on a response_url for 30 minutes; past that a retry cannot deliver. */
const RESPONSE_URL_LIFETIME_MS = 30 * 60_000;

/** What a command's record is, for log lines: the verb and the channel. */
export function commandLabel(work: DeferredSlackCommand): WorkLabel {
  return { id: `${work.command.kind}@${work.context.channel}`, type: 'slack_command' };
}

/** A deferred `/visibility` command: answered via its response_url; retried while that URL still works. */
async function answerCommand(work: DeferredSlackCommand, deps: DeferredDeps): Promise<RecordResult> {
  try {
    await runDeferredCommand(work, deps);
  } catch (error) {
    deps.metrics.count(SLACK_APP_METRICS.slackResponseFailed);
    if (deps.clock.now() - work.receivedAtMs < RESPONSE_URL_LIFETIME_MS)
      throw new Unavailable('Slack did not take the answer at response_url', { cause: error });
    deps.log.error('slash command left unanswered: its response_url expired', {
      command: work.command.kind,
      channel: work.context.channel,
      ...describeError(error),
    });
    return 'expired';
  }
  deps.metrics.count(SLACK_APP_METRICS.slackCommandAnswered);
  return 'answered';
}

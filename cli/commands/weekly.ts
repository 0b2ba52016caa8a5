/**
 * `bridge trigger weekly [--channel C]`: runs the weekly report now. Puts the same message the
 * stack's schedule sends (`weekly_sweep`, with `now: true`) on the digest queue of the local stack
 * (ready file) or a deployed one (stack output QueueUrl): every home or opted-in channel — or only
 * C — gets its report whatever its schedule says. The week's claim still holds: a channel already
 * sent this week's report gets nothing new.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { buildContext, str, type Parsed } from '../args';
import { sqsClient, STACK_OUTPUTS } from '../aws';
import { CliError } from '../errors';
import type { CliIo } from '../io';
import { needLocal } from '../ready-file';
import type { CommandResult } from '../result';
import { weeklySweepMessage } from '../../shared/weekly/message';

export async function triggerWeekly(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const ctx = await buildContext(parsed, io);
  const channel = str(parsed, 'channel')?.trim();
  const queueUrl =
    ctx.local !== undefined
      ? needLocal(ctx.local, ctx.local.queueUrl, 'queueUrl')
      : await ctx.stack.require(STACK_OUTPUTS.queueUrl, '--stack');
  const message = weeklySweepMessage({ channel: channel === '' ? undefined : channel, now: true });
  const sqs = sqsClient(ctx.settings);
  try {
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }));
    ctx.out.say(
      `queued a weekly report run for ${channel ? `channel ${channel}` : 'every home or opted-in channel'} (message ${sent.MessageId ?? '?'})`,
    );
    // A weekly report is a post in each channel, not a delivery or a digest: plain `tail` leaves it out.
    const preview = ctx.local?.previewUrl;
    const where =
      preview !== undefined
        ? `see it in the preview: ${preview}`
        : `look for it in ${channel ? `channel ${channel}` : 'each channel'} in Slack`;
    ctx.out.say(
      `each channel gets at most one report a week; ${where} (\`${ctx.hint('tail --all')}\` shows its "weekly report posted" line)`,
    );
    return { exitCode: 0, json: { queueUrl, message, messageId: sent.MessageId } };
  } catch (error) {
    throw new CliError(
      `could not queue the weekly report: ${error instanceof Error ? error.message : String(error)}`,
      'check that the stack is running (npm start) or that --stack names a deployed stack you may send to',
      'queue_unavailable',
    );
  } finally {
    sqs.destroy();
  }
}

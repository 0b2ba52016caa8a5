/**
 * The rehearsal's scenarios for what the digest function posts (a digest, the weekly report, the trend
 * chart, quiet hours), each through the real bundle and the template's wiring.
 */
import { GetItemCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DIGEST_METRICS, QUEUE_MESSAGE_KINDS, TABLE } from '../../shared/contracts';
import { WEEKLY_EVENT_TYPE } from '../../shared/weekly/sweep';
import type { PostedMessage } from '../slack/server';
import { answerOf, idOf, isoSeconds, lastLine, type ScenarioContext } from './scenario-context';
import { channelSubscribed, recordedResponseUrl, slashCommandForm } from './slack-requests';

/** The channel quiet hours are set in (subscribed first, as a channel must be to get digests). */
const QUIET_CHANNEL = 'C0QUIET';
const DAY_MS = 24 * 3600 * 1000;
/** How long the refused digest's trend PNG may take: vega and the wasm renderer, in a 512 MB function, on a busy machine. */
const CHART_WAIT_MS = 90_000;

/** The service's own signed `run.completed` (the simulator's sender) → a digest in the configured channel. */
export async function digestScenario(context: ScenarioContext): Promise<void> {
  const channel = context.defaultChannel;
  const before = context.postsIn(channel).length;
  const sent = context.stack.peers.simulator.triggerRun(context.project());
  const report = await sent.delivered;
  const accepted =
    report.results.length > 0 && report.results.every((result) => result.outcome === 'delivered' && result.lastStatus === 200);
  context.record(
    'digest: the service’s signed run.completed is accepted (200)',
    accepted,
    accepted ? '' : JSON.stringify(report).slice(0, 300),
  );
  const post = await context.waitFor(`a digest in ${channel}`, () => context.postsIn(channel)[before]);
  context.digestTs = post.ts;
  context.record(`digest: posted in the configured channel ${channel}`, true, (post.text ?? '').slice(0, 80));
}

/**
 * `npx bridge trigger weekly --stack …` with Slack failing: the default channel's report fails
 * (`WeeklyReportFailed`) and its claim is released; with Slack back the same sweep posts the week's
 * report there, and sent again posts nothing twice (the week's claim per channel). The default channel
 * is a home channel, so no Slack command (and no configured workspace) is needed.
 */
export async function weeklyScenario(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const channel = context.defaultChannel;
  const reportsIn = (c: string): PostedMessage[] => stack.peers.slack.messages(c).filter(isWeeklyReport);
  const before = reportsIn(channel).length;
  const sweep = ['trigger', 'weekly', '--stack', stack.stackName];

  const failedBefore = context.metricCount(DIGEST_METRICS.weeklyReportFailed);
  stack.peers.slack.injectFault({ method: 'chat.postMessage', kind: 'server_error' });
  try {
    const failing = await context.bridge(sweep);
    if (failing.code !== 0) throw new Error(`npx bridge ${sweep.join(' ')}: exit ${failing.code}: ${lastLine(failing.stderr)}`);
    await context.waitForMetric(DIGEST_METRICS.weeklyReportFailed, failedBefore, 60_000);
  } finally {
    stack.peers.slack.clearFaults();
  }
  context.record(
    `weekly: with Slack failing, the report due in ${channel} fails and counts ${DIGEST_METRICS.weeklyReportFailed}`,
    reportsIn(channel).length === before,
    `reports in ${channel}: ${reportsIn(channel).length - before}`,
  );

  const sent = await context.bridge(sweep);
  context.record(`weekly: npx bridge ${sweep.join(' ')}`, sent.code === 0, lastLine(sent.code === 0 ? sent.stdout : sent.stderr));
  const report = await context.waitFor(`a weekly report in ${channel}`, () => reportsIn(channel)[before]);
  context.record(
    `weekly: once Slack is back, the report is posted in the default channel ${channel}`,
    true,
    (report.text ?? '').slice(0, 80),
  );

  const again = await context.bridge(sweep);
  await stack.settle(15_000);
  const posted = reportsIn(channel).length - before;
  context.record(
    'weekly: the sweep sent again the same week posts nothing twice',
    again.code === 0 && posted === 1,
    `exit ${again.code}; reports in ${channel}: ${posted}`,
  );
}

/**
 * A second run of a project (the first, two days earlier, is its trend's first point) carries Slack's
 * own chart in its digest. A third, posted while Slack refuses chart blocks, is sent again with the
 * chart's words and, the stage having `chartsEnabled`, gets the PNG in its thread: drawn by the
 * renderer's own bundle beside the handler, its wasm and font shipped with it.
 */
export async function chartScenario(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const slack = stack.peers.slack;
  const channel = context.defaultChannel;
  // Not the project the other scenarios send runs of: an older baseline would be superseded by theirs.
  const projectIds = stack.peers.simulator.projectIds();
  const project = projectIds[1] ?? context.project();
  const digestOf = (eventId: string) => () => slack.messages(channel).find((m) => eventIdOf(m) === eventId && m.thread_ts === undefined);
  const baseline = context.runCompletedBody({ created_at: isoSeconds(Date.now() - 2 * DAY_MS) }, project);
  await context.deliverAccepted('chart: the baseline run', baseline);
  await context.waitFor('the baseline digest', digestOf(idOf(baseline)));
  const [uploadsBefore, postedBefore, failedBefore] = [
    slack.calls('files.completeUploadExternal').length,
    context.metricCount(DIGEST_METRICS.chartPosted),
    context.metricCount(DIGEST_METRICS.chartFailed),
  ];

  const second = context.runCompletedBody({ created_at: isoSeconds(Date.now() - DAY_MS) }, project);
  await context.deliverAccepted('chart: the second run', second);
  const digest = await context.waitFor('the second digest', digestOf(idOf(second)));
  const nativeChart = hasNativeChart(digest);
  context.record(
    `chart: the second run's digest in ${channel} carries Slack's own chart, nothing uploaded`,
    nativeChart && slack.calls('files.completeUploadExternal').length === uploadsBefore,
    `data_visualization block ${nativeChart ? 'present' : 'missing'}`,
  );

  // A workspace Slack's rollout has not reached: the chart refused (invalid_blocks), the message sent again
  // with its words, and with the stage's chartsEnabled the PNG renderer (its own bundle) draws it into the thread.
  // The second digest's thread (its tables) posted first: the refusal is for the third run's chart alone.
  await stack.settle(10_000);
  const refusedBefore = context.metricCount(DIGEST_METRICS.nativeBlockRefused);
  slack.injectFault({ kind: 'refuse_native_blocks', channel, method: 'chat.postMessage', times: 1 });
  const third = context.runCompletedBody({}, project);
  await context.deliverAccepted('chart: a run where Slack refuses the chart', third);
  const refusedDigest = await context.waitFor('the digest sent without its chart', digestOf(idOf(third)));
  const pngIn = () => slack.messages(channel).find((m) => m.thread_ts === refusedDigest.ts && (m.files?.length ?? 0) > 0);
  // Drawn in the digest's invocation, which on a busy machine outlasts a settle's 15 s: waited for (the checks below say what is missing).
  const drawn = () => (pngIn() !== undefined || context.metricCount(DIGEST_METRICS.chartFailed) > failedBefore ? true : undefined);
  await context.waitFor("the trend PNG in the refused digest's thread", drawn, CHART_WAIT_MS).catch(() => undefined);
  await stack.settle(15_000);
  const words = !hasNativeChart(refusedDigest);
  context.record(`chart: the refused digest was sent again with the chart's words`, words, words ? 'no chart block' : 'chart block kept');
  const file = pngIn()?.files?.[0];
  const failure = stack.lines.find((line) => line.line.includes('ChartFailed'))?.line.slice(0, 300);
  context.record(
    `chart: the refused chart's digest thread in ${channel} gets the trend PNG`,
    file?.mimetype === 'image/png' && slack.calls('files.getUploadURLExternal').length > 0,
    file
      ? `${file.name ?? '?'} (${file.mimetype ?? '?'}, ${file.size ?? 0} bytes)`
      : (failure ?? `no PNG within ${CHART_WAIT_MS / 1000} s`),
  );
  const uploads = slack.calls('files.completeUploadExternal').length - uploadsBefore;
  const posted = context.metricCount(DIGEST_METRICS.chartPosted) - postedBefore;
  const failed = context.metricCount(DIGEST_METRICS.chartFailed) - failedBefore;
  const refused = context.metricCount(DIGEST_METRICS.nativeBlockRefused) - refusedBefore;
  context.record(
    `chart: ${DIGEST_METRICS.nativeBlockRefused} counted, one upload, ${DIGEST_METRICS.chartPosted} counted, no ${DIGEST_METRICS.chartFailed}`,
    refused >= 1 && uploads === 1 && posted === 1 && failed === 0,
    `${DIGEST_METRICS.nativeBlockRefused} ${refused}, files.completeUploadExternal ×${uploads}, ${DIGEST_METRICS.chartPosted} ${posted}, ${DIGEST_METRICS.chartFailed} ${failed}`,
  );
  const missing = stack.lines.filter((line) => line.line.includes('ChartAssetMissing'));
  context.record(
    'chart: the bundle ships the wasm and the font (no ChartAssetMissing logged)',
    missing.length === 0,
    missing.map((line) => line.line.slice(0, 200)).join('\n'),
  );
}

/**
 * `/visibility quiet <now> UTC` in a subscribed channel holds its next digest (`DigestHeld`); a hold the
 * table refuses skips that channel alone (`DigestHoldFailed`); after `quiet off`, the schedule's
 * `quiet_catch_up` message posts one catch-up there.
 */
export async function quietScenario(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const url = context.outputs['SlackCommandsUrl']!;
  const command = (text: string, responseUrl: string) => slashCommandForm(context, text, responseUrl, { channel: QUIET_CHANNEL });
  const responses = recordedResponseUrl('quiet');
  const subscribe = await context.slackRequest(url, command(`subscribe ${context.project()}`, responses.url));
  if (subscribe.status !== 200) throw new Error(`/visibility subscribe in ${QUIET_CHANNEL} was not accepted: ${answerOf(subscribe)}`);
  await context.waitFor(`${QUIET_CHANNEL} subscribed`, async () => ((await channelSubscribed(context, QUIET_CHANNEL)) ? true : undefined));
  await stack.settle(10_000);
  const postsBefore = context.postsIn(QUIET_CHANNEL).length;

  const window = windowAround(Date.now());
  const quiet = await context.slackRequest(url, command(`quiet ${window} UTC`, responses.url));
  context.record(`quiet: /visibility quiet ${window} UTC in ${QUIET_CHANNEL} is answered`, quiet.status === 200, answerOf(quiet));
  const heldBefore = context.metricCount(DIGEST_METRICS.digestHeld);
  await context.deliverAccepted('quiet: a run', context.runCompletedBody());
  await context.waitForMetric(DIGEST_METRICS.digestHeld, heldBefore);
  await stack.settle(10_000);
  const duringQuiet = context.postsIn(QUIET_CHANNEL).length - postsBefore;
  context.record(
    `quiet: the run's digest is held in ${QUIET_CHANNEL} (${DIGEST_METRICS.digestHeld}), nothing posted there`,
    duringQuiet === 0,
    `${duringQuiet} posts`,
  );

  await holdRefused(context, postsBefore);

  const off = await context.slackRequest(url, command('quiet off', responses.url));
  context.record('quiet: /visibility quiet off is answered', off.status === 200, answerOf(off));
  const sweep = JSON.stringify({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp });
  await context.sendToQueue('QueueUrl', sweep);
  await context.waitFor(`a catch-up in ${QUIET_CHANNEL}`, () => context.postsIn(QUIET_CHANNEL)[postsBefore]);
  // A second sweep finds nothing held: the catch-up is not posted again.
  await context.sendToQueue('QueueUrl', sweep);
  await stack.settle(15_000);
  const catchUps = context.postsIn(QUIET_CHANNEL).length - postsBefore;
  context.record(
    `quiet: after quiet off, the ${QUEUE_MESSAGE_KINDS.quietCatchUp} sweep posts one catch-up in ${QUIET_CHANNEL} (${DIGEST_METRICS.quietCatchUpPosted})`,
    catchUps === 1 && context.metricCount(DIGEST_METRICS.quietCatchUpPosted) > 0,
    `${catchUps} posts: ${(context.postsIn(QUIET_CHANNEL)[postsBefore]?.text ?? '').slice(0, 80)}`,
  );
}

/** A held item whose counter is not a number: the table refuses the next hold; the run goes on in its other channels. */
async function holdRefused(context: ScenarioContext, postsBefore: number): Promise<void> {
  const { client } = context.stack.peers.dynamo;
  const held = {
    TableName: context.outputs['TableName']!,
    Key: { [TABLE.partitionKey]: { S: `${TABLE.prefixes.held}${QUIET_CHANNEL}` } },
  };
  const setVersion = (value: AttributeValue) =>
    client.send(new UpdateItemCommand({ ...held, UpdateExpression: 'SET version = :v', ExpressionAttributeValues: { ':v': value } }));
  const version = (await client.send(new GetItemCommand({ ...held, ConsistentRead: true }))).Item?.['version'] ?? { N: '1' };
  await setVersion({ S: 'not a number' });
  const failedBefore = context.metricCount(DIGEST_METRICS.digestHoldFailed);
  const postedBefore = context.metricCount(DIGEST_METRICS.digestPosted);
  await context.deliverAccepted('quiet: a run the table refuses to hold', context.runCompletedBody());
  await context.waitForMetric(DIGEST_METRICS.digestHoldFailed, failedBefore);
  await context.stack.settle(10_000);
  await setVersion(version);
  const posted = context.metricCount(DIGEST_METRICS.digestPosted) - postedBefore;
  const there = context.postsIn(QUIET_CHANNEL).length - postsBefore;
  context.record(
    `quiet: a hold the table refuses skips ${QUIET_CHANNEL} alone (${DIGEST_METRICS.digestHoldFailed}); the run is posted in its other channels`,
    posted > 0 && there === 0,
    `${DIGEST_METRICS.digestPosted} +${posted}, ${there} posts in ${QUIET_CHANNEL}`,
  );
}

/** A daily window from 10 minutes ago to 3 hours on (UTC `HH:MM-HH:MM`; across midnight is fine). */
export function windowAround(nowMs: number): string {
  const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
  return `${hhmm(nowMs - 10 * 60_000)}-${hhmm(nowMs + 3 * 3600_000)}`;
}

function isWeeklyReport(message: PostedMessage): boolean {
  return (message.metadata as { event_type?: unknown } | undefined)?.event_type === WEEKLY_EVENT_TYPE;
}

function hasNativeChart(message: { blocks?: unknown[] | undefined }): boolean {
  return (message.blocks ?? []).some((block) => (block as { type?: unknown }).type === 'data_visualization');
}

function eventIdOf(message: PostedMessage): unknown {
  return (message.metadata as { event_payload?: { event_id?: unknown } } | undefined)?.event_payload?.event_id;
}

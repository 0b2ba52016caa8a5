/**
 * The rehearsal's scenarios for the paths issues 22/23 added to the digest function, each through the
 * real bundle and the template's wiring: the weekly report (`bridge trigger weekly`, its claim, its
 * failure metric), the trend chart (the bundle's wasm and font, the files upload), and quiet hours
 * (a held digest, a hold the table refuses, then one catch-up from the `quiet_catch_up` sweep message
 * the schedule sends).
 */
import { GetItemCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DIGEST_METRICS, QUEUE_MESSAGE_KINDS, TABLE } from '../../shared/contracts';
import { WEEKLY_EVENT_TYPE } from '../../shared/weekly/sweep';
import type { PostedMessage } from '../slack/server';
import { createSqsClient } from '../sqs-server';
import { emfMetrics } from './alarm-coverage';
import { channelSubscribed, recordedResponseUrl, slashCommandForm, type StackHost } from './slack-requests';

/** What these scenarios use of the rehearsal's context (rehearsal.ts's ScenarioContext). */
export interface ScenarioHost extends StackHost {
  readonly defaultChannel: string;
  project(): string;
  bridge(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  deliver(body: string): Promise<{ status: number; text: string }>;
  runCompletedBody(overrides?: Record<string, unknown>, projectId?: string): string;
  slackRequest(url: string, form: string): Promise<{ status: number; text: string }>;
  waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  postsIn(channel: string): { ts: string; text: string | undefined; thread_ts: string | undefined }[];
  record(name: string, ok: boolean, detail: string): void;
}

/** A channel that is no home channel and said nothing: named with --channel, its report is due at once. */
const WEEKLY_FAILING_CHANNEL = 'C0WEEKLYDOWN';
/** The channel quiet hours are set in (subscribed first, as a channel must be to get digests). */
const QUIET_CHANNEL = 'C0QUIET';
const DAY_MS = 24 * 3600 * 1000;

/**
 * `npx bridge trigger weekly --stack …` posts the week's report in the default channel; with Slack
 * failing, a report due in another channel fails (`WeeklyReportFailed`), and the sweep sent again
 * posts nothing twice (the week's claim per channel).
 */
export async function weeklyScenario(context: ScenarioHost): Promise<void> {
  const { stack } = context;
  const channel = context.defaultChannel;
  const reportsIn = (c: string): PostedMessage[] => stack.peers.slack.messages(c).filter(isWeeklyReport);
  const before = reportsIn(channel).length;
  const sweep = ['trigger', 'weekly', '--stack', stack.stackName];
  const sent = await context.bridge(sweep);
  context.record(`weekly: npx bridge ${sweep.join(' ')}`, sent.code === 0, firstLine(sent.code === 0 ? sent.stdout : sent.stderr));
  const report = await context.waitFor(`a weekly report in ${channel}`, () => reportsIn(channel)[before]);
  context.record(`weekly: the report is posted in the default channel ${channel}`, true, (report.text ?? '').slice(0, 80));

  // A sweep names only a home channel or one that opted in (shared/weekly/sweep.ts refuses others).
  const optIn = slashCommandForm(context, 'weekly on', recordedResponseUrl('weekly').url, { channel: WEEKLY_FAILING_CHANNEL });
  const optedIn = await context.slackRequest(context.outputs['SlackCommandsUrl']!, optIn);
  if (optedIn.status !== 200) throw new Error(`/visibility weekly on in ${WEEKLY_FAILING_CHANNEL}: HTTP ${optedIn.status}`);
  const failedBefore = metricCount(context, DIGEST_METRICS.weeklyReportFailed);
  stack.peers.slack.injectFault({ method: 'chat.postMessage', kind: 'server_error' });
  try {
    const failing = await context.bridge([...sweep, '--channel', WEEKLY_FAILING_CHANNEL]);
    if (failing.code !== 0) throw new Error(`bridge trigger weekly --channel: exit ${failing.code}: ${firstLine(failing.stderr)}`);
    await context.waitFor(
      `${DIGEST_METRICS.weeklyReportFailed} emitted`,
      () => (metricCount(context, DIGEST_METRICS.weeklyReportFailed) > failedBefore ? true : undefined),
      60_000,
    );
  } finally {
    stack.peers.slack.clearFaults();
  }
  context.record(
    `weekly: with Slack failing, the report due in ${WEEKLY_FAILING_CHANNEL} fails and counts ${DIGEST_METRICS.weeklyReportFailed}`,
    reportsIn(WEEKLY_FAILING_CHANNEL).length === 0,
    `reports in ${WEEKLY_FAILING_CHANNEL}: ${reportsIn(WEEKLY_FAILING_CHANNEL).length}`,
  );

  // Slack is back: a sweep of this week again finds the default channel's claim done.
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
 * A second run of a project (the first, two days earlier, is its trend's first point) gets the
 * trend chart uploaded into its digest thread by the bundle: the chart's wasm and font ship with it.
 */
export async function chartScenario(context: ScenarioHost): Promise<void> {
  const { stack } = context;
  const slack = stack.peers.slack;
  const channel = context.defaultChannel;
  // Not the project the other scenarios send runs of: an older baseline would be superseded by theirs.
  const projectIds = stack.peers.simulator.projectIds();
  const project = projectIds[1] ?? context.project();
  const digestOf = (eventId: string) => () => slack.messages(channel).find((m) => eventIdOf(m) === eventId && m.thread_ts === undefined);
  const baseline = context.runCompletedBody({ created_at: isoSeconds(Date.now() - 2 * DAY_MS) }, project);
  await deliverAccepted(context, 'chart: the baseline run', baseline);
  await context.waitFor('the baseline digest', digestOf(idOf(baseline)));
  const [uploadsBefore, postedBefore, failedBefore] = [
    slack.calls('files.completeUploadExternal').length,
    metricCount(context, DIGEST_METRICS.chartPosted),
    metricCount(context, DIGEST_METRICS.chartFailed),
  ];

  const second = context.runCompletedBody({}, project);
  await deliverAccepted(context, 'chart: the second run', second);
  const digest = await context.waitFor('the second digest', digestOf(idOf(second)));
  const chart = await context.waitFor('a chart in the digest thread', () =>
    slack.messages(channel).find((m) => m.thread_ts === digest.ts && (m.files?.length ?? 0) > 0),
  );
  await stack.settle(10_000);
  const file = chart.files?.[0];
  context.record(
    `chart: the second run's digest thread in ${channel} gets the trend PNG`,
    file?.mimetype === 'image/png' && slack.calls('files.getUploadURLExternal').length > 0,
    `${file?.name ?? '?'} (${file?.mimetype ?? '?'}, ${file?.size ?? 0} bytes)`,
  );
  const uploads = slack.calls('files.completeUploadExternal').length - uploadsBefore;
  const posted = metricCount(context, DIGEST_METRICS.chartPosted) - postedBefore;
  const failed = metricCount(context, DIGEST_METRICS.chartFailed) - failedBefore;
  context.record(
    `chart: one upload, ${DIGEST_METRICS.chartPosted} counted, no ${DIGEST_METRICS.chartFailed}`,
    uploads === 1 && posted === 1 && failed === 0,
    `files.completeUploadExternal ×${uploads}, ${DIGEST_METRICS.chartPosted} ${posted}, ${DIGEST_METRICS.chartFailed} ${failed}`,
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
export async function quietScenario(context: ScenarioHost): Promise<void> {
  const { stack } = context;
  const url = context.outputs['SlackCommandsUrl']!;
  const command = (text: string, responseUrl: string) => slashCommandForm(context, text, responseUrl, { channel: QUIET_CHANNEL });
  const responses = recordedResponseUrl('quiet');
  await context.slackRequest(url, command(`subscribe ${context.project()}`, responses.url));
  await context.waitFor(`${QUIET_CHANNEL} subscribed`, async () => ((await channelSubscribed(context, QUIET_CHANNEL)) ? true : undefined));
  await stack.settle(10_000);
  const postsBefore = context.postsIn(QUIET_CHANNEL).length;

  const window = windowAround(Date.now());
  const quiet = await context.slackRequest(url, command(`quiet ${window} UTC`, responses.url));
  context.record(`quiet: /visibility quiet ${window} UTC in ${QUIET_CHANNEL} is answered`, quiet.status === 200, answerOf(quiet));
  const heldBefore = metricCount(context, DIGEST_METRICS.digestHeld);
  await deliverAccepted(context, 'quiet: a run', context.runCompletedBody());
  await context.waitFor(`${DIGEST_METRICS.digestHeld} emitted`, () =>
    metricCount(context, DIGEST_METRICS.digestHeld) > heldBefore ? true : undefined,
  );
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
  await sendToDigestQueue(context, { kind: QUEUE_MESSAGE_KINDS.quietCatchUp });
  await context.waitFor(`a catch-up in ${QUIET_CHANNEL}`, () => context.postsIn(QUIET_CHANNEL)[postsBefore]);
  // A second sweep finds nothing held: the catch-up is not posted again.
  await sendToDigestQueue(context, { kind: QUEUE_MESSAGE_KINDS.quietCatchUp });
  await stack.settle(15_000);
  const catchUps = context.postsIn(QUIET_CHANNEL).length - postsBefore;
  context.record(
    `quiet: after quiet off, the ${QUEUE_MESSAGE_KINDS.quietCatchUp} sweep posts one catch-up in ${QUIET_CHANNEL} (${DIGEST_METRICS.quietCatchUpPosted})`,
    catchUps === 1 && metricCount(context, DIGEST_METRICS.quietCatchUpPosted) > 0,
    `${catchUps} posts: ${(context.postsIn(QUIET_CHANNEL)[postsBefore]?.text ?? '').slice(0, 80)}`,
  );
}

/** A held item whose counter is not a number: the table refuses the next hold; the run goes on in its other channels. */
async function holdRefused(context: ScenarioHost, postsBefore: number): Promise<void> {
  const { client } = context.stack.peers.dynamo;
  const held = {
    TableName: context.outputs['TableName']!,
    Key: { [TABLE.partitionKey]: { S: `${TABLE.prefixes.held}${QUIET_CHANNEL}` } },
  };
  const setVersion = (value: AttributeValue) =>
    client.send(new UpdateItemCommand({ ...held, UpdateExpression: 'SET version = :v', ExpressionAttributeValues: { ':v': value } }));
  const version = (await client.send(new GetItemCommand({ ...held, ConsistentRead: true }))).Item?.['version'] ?? { N: '1' };
  await setVersion({ S: 'not a number' });
  const failedBefore = metricCount(context, DIGEST_METRICS.digestHoldFailed);
  const postedBefore = metricCount(context, DIGEST_METRICS.digestPosted);
  await deliverAccepted(context, 'quiet: a run the table refuses to hold', context.runCompletedBody());
  await context.waitFor(`${DIGEST_METRICS.digestHoldFailed} emitted`, () =>
    metricCount(context, DIGEST_METRICS.digestHoldFailed) > failedBefore ? true : undefined,
  );
  await context.stack.settle(10_000);
  await setVersion(version);
  const posted = metricCount(context, DIGEST_METRICS.digestPosted) - postedBefore;
  const there = context.postsIn(QUIET_CHANNEL).length - postsBefore;
  context.record(
    `quiet: a hold the table refuses skips ${QUIET_CHANNEL} alone (${DIGEST_METRICS.digestHoldFailed}); the run is posted in its other channels`,
    posted > 0 && there === 0,
    `${DIGEST_METRICS.digestPosted} +${posted}, ${there} posts in ${QUIET_CHANNEL}`,
  );
}

// -------------------------------------------------------------------------------------------------

/** How often the stack's functions emitted the metric so far (their EMF lines). */
function metricCount(context: StackHost, name: string): number {
  return emfMetrics(context.stack.lines.map((line) => line.line)).filter((metric) => metric.name === name).length;
}

async function deliverAccepted(context: ScenarioHost, what: string, body: string): Promise<void> {
  const answer = await context.deliver(body);
  if (answer.status !== 200) throw new Error(`${what} was not accepted: HTTP ${answer.status} ${answer.text.slice(0, 120)}`);
}

/** The message the stack's schedule sends, put on the digest queue (the stack output QueueUrl) as the schedule's target does. */
async function sendToDigestQueue(context: StackHost, message: Record<string, unknown>): Promise<void> {
  const sqs = createSqsClient(context.stack.peers.sqs.url);
  try {
    await sqs.send(new SendMessageCommand({ QueueUrl: context.outputs['QueueUrl']!, MessageBody: JSON.stringify(message) }));
  } finally {
    sqs.destroy();
  }
}

/** A daily window from 10 minutes ago to 3 hours on (UTC `HH:MM-HH:MM`; across midnight is fine). */
export function windowAround(nowMs: number): string {
  const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
  return `${hhmm(nowMs - 10 * 60_000)}-${hhmm(nowMs + 3 * 3600_000)}`;
}

function isWeeklyReport(message: PostedMessage): boolean {
  return (message.metadata as { event_type?: unknown } | undefined)?.event_type === WEEKLY_EVENT_TYPE;
}

function eventIdOf(message: PostedMessage): unknown {
  return (message.metadata as { event_payload?: { event_id?: unknown } } | undefined)?.event_payload?.event_id;
}

function idOf(body: string): string {
  return (JSON.parse(body) as { id: string }).id;
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function answerOf(answer: { status: number; text: string }): string {
  return `HTTP ${answer.status} ${answer.text.slice(0, 120)}`;
}

function firstLine(text: string): string {
  return (text.trim().split('\n')[0] ?? '').slice(0, 200);
}

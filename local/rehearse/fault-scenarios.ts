/**
 * Faults the alarms exist for, each made to happen once: quarantined, oversized and unusable records, a
 * superseded run, Slack's 429 and its outage (→ DLQ → `bridge dlq replay`), a killed environment per
 * function, bad and unset signing secrets, a webhook secret rotated with the CLI, a flood past the
 * stage's burst.
 */
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { answerOf, isoSeconds, lastLine, requestStatus, type ScenarioContext } from './scenario-context';
import { findButtonBlock, slashCommandForm } from './slack-requests';
import { blockActionsForm } from '../slack-app-delivery';

/** Faults the alarms exist for, each made to happen once. */
export async function faultScenarios(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const quarantined = await context.deliver(context.runCompletedBody({ data: { project_id: context.project() } }));
  context.record('fault: a signed delivery without run_id is quarantined (202)', quarantined.status === 202, `HTTP ${quarantined.status}`);
  const oversized = await context.deliver(context.runCompletedBody({ padding: 'x'.repeat(70_000) }));
  context.record('fault: an oversized delivery is refused (413)', oversized.status === 413, `HTTP ${oversized.status}`);

  // At once: an unusable record put straight on the digest queue, a run and an older run of the
  // same project (superseded), while Slack answers the first post with 429 (waited out).
  const postsBefore = context.postsIn(context.defaultChannel).length;
  stack.peers.slack.injectFault({ method: 'chat.postMessage', kind: 'ratelimited', times: 1, retryAfterSeconds: 1 });
  await context.sendToQueue('QueueUrl', '{"not":"an event"}');
  const older = context.runCompletedBody({ created_at: isoSeconds(Date.now() - 3_600_000) });
  const newer = await context.deliver(context.runCompletedBody());
  const superseded = await context.deliver(older);
  await stack.settle(30_000);
  stack.peers.slack.clearFaults();
  context.record('fault: an unusable queued record is quarantined, not retried', (await stack.queuedMessages()) === 0, '');
  context.record(
    'fault: an older run after a newer one is accepted and superseded',
    newer.status === 200 && superseded.status === 200,
    `HTTP ${newer.status}, ${superseded.status}`,
  );
  const limited = stack.peers.slack.calls('chat.postMessage').some((call) => call.status === 429);
  const postedAfter = context.postsIn(context.defaultChannel).length > postsBefore;
  context.record(
    'fault: a Slack 429 is waited out and the digest posted',
    limited && postedAfter,
    `429 seen: ${limited}, posted: ${postedAfter}`,
  );

  // A response_url that no longer answers: the click's note can't be delivered.
  await slackAnswerUndelivered(context);

  // Environments that die mid-invocation (out of memory, a killed sandbox): Lambda's Errors metric.
  for (const fn of stack.functions.values()) await crashDuringInvocation(context, fn.spec.logicalId);

  // Bad values put in the signing secrets: the functions keep or refuse, and say so.
  await badSecretValues(context);
}

async function slackAnswerUndelivered(context: ScenarioContext): Promise<void> {
  const name = 'fault: a click whose response_url has expired is still answered';
  const unconfigured = context.unconfiguredWorkspace();
  if (unconfigured !== undefined) return context.log.skip(name, unconfigured);
  const slack = context.stack.peers.slack;
  const message = slack.messages(context.defaultChannel).find((m) => m.ts === context.digestTs);
  const blocks = message?.blocks ?? [];
  const action = findButtonBlock(blocks, undefined, /only|changes|mode/i) ?? findButtonBlock(blocks, undefined, /mute/i);
  if (message === undefined || action === undefined) return;
  const place = {
    message: { ...message, blocks },
    channel: context.defaultChannel,
    responseUrl: 'https://hooks.slack.com/actions/T0/expired',
  };
  const form = blockActionsForm(
    { teamId: slack.teamId, appId: slack.appId, user: { id: 'U0REHEARSE', name: 'operator' }, place, action },
    Date.now(),
  );
  const answer = await context.slackRequest(context.outputs['SlackInteractionsUrl']!, form);
  context.record(name, answer.status === 200, `HTTP ${answer.status}`);
}

async function crashDuringInvocation(context: ScenarioContext, logicalId: string): Promise<void> {
  const { stack } = context;
  const fn = stack.fn(logicalId);
  const errorsBefore = fn.errors;
  fn.recycle();
  // A cold start is long enough to be caught in flight.
  const running = fn.invoke({}).catch(() => undefined);
  await context.waitFor(`${logicalId} in flight`, () => (fn.crashOne() ? true : undefined), 5_000);
  await running;
  context.record(`fault: ${logicalId} environment killed mid-invocation is a function error`, fn.errors > errorsBefore, '');
}

/** Bad values put in the signing secrets, each read by a fresh environment: the functions keep or refuse, and say so. */
async function badSecretValues(context: ScenarioContext): Promise<void> {
  const { values } = context;
  const put = async (outputKey: string, value: string, functionType: string): Promise<void> => {
    await context.putSecret(outputKey, value);
    context.stack.functionOfType(functionType).recycle();
  };
  const check = async (name: string, answer: Promise<{ status: number; text: string }>, expected = 503): Promise<void> => {
    const answered = await answer;
    context.record(`fault: ${name}`, answered.status === expected, answerOf(answered));
  };
  const delivery = () => context.deliver(context.runCompletedBody());
  const help = () => context.slackRequest(context.outputs['SlackCommandsUrl']!, slashCommandForm(context, 'help'));
  await put('SigningSecretsSecretArn', 'whsec_not_a_json_array', 'WebhookIngest');
  await check('an invalid webhook signing secrets value is refused at a cold start (503), not accepted', delivery());
  await put('SigningSecretsSecretArn', 'PLACEHOLDER', 'WebhookIngest');
  await check('webhook signing secrets still unset answer 503 (the sender retries)', delivery());
  await put('SigningSecretsSecretArn', JSON.stringify([values.webhookSecret]), 'WebhookIngest');
  await put('SlackSigningSecretSecretArn', 'PLACEHOLDER', 'SlackApp');
  await check('a Slack signing secret still unset answers 503', help());
  await put('SlackSigningSecretSecretArn', values.slackSigningSecret, 'SlackApp');
  // Verified, the request reaches the workspace gate: answered, or 403 while the stage names no workspace.
  const verified = context.unconfiguredWorkspace() === undefined ? 200 : 403;
  await check('once put again, the Slack signing secret verifies requests', help(), verified);
}

/** More requests at once than the stage's burst: API Gateway answers 429 (and the access log counts them). */
export async function floodScenario(context: ScenarioContext): Promise<void> {
  // Not a route: throttling comes before routing, and no function runs for it.
  const url = new URL(`${context.stack.gateway.url}/flood`);
  const wave = 3_000;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  // On a loaded machine one wave can take long enough for the bucket to refill; the next wave comes on top.
  let sent = 0;
  let throttled = 0;
  for (let round = 0; round < 4 && throttled === 0; round++) {
    const statuses = await Promise.all(Array.from({ length: wave }, () => requestStatus(url, agent, { method: 'GET' })));
    sent += wave;
    throttled += statuses.filter((status) => status === 429).length;
  }
  agent.destroy();
  context.record(
    `flood: requests at once past the stage's burst are throttled (429)`,
    throttled > 0,
    `${throttled} of ${sent} answered 429`,
  );
}

/** Slack down: the digest's record goes to the DLQ after maxReceiveCount; `bridge dlq replay --stack` posts it once. */
export async function slackOutageScenario(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const dlq = stack.queues().find((q) => q.url === context.outputs['DlqUrl']);
  if (!dlq) throw new Error('the stack output DlqUrl names no queue of the template');
  const channel = context.defaultChannel;
  const parkedBefore = (await stack.queueCounts(dlq.url)).visible;
  stack.peers.slack.injectFault({ method: 'chat.postMessage', kind: 'server_error' });
  const body = context.runCompletedBody();
  const eventId = (JSON.parse(body) as { id: string }).id;
  const accepted = await context.deliver(body);
  context.record('slack outage: the delivery is accepted', accepted.status === 200, `HTTP ${accepted.status}`);
  await context.waitFor(
    'the record in the DLQ',
    async () => ((await stack.queueCounts(dlq.url)).visible > parkedBefore ? true : undefined),
    60_000,
  );
  context.record('slack outage: after maxReceiveCount receives the record rests in the DLQ', true, '');
  stack.peers.slack.clearFaults();
  const before = context.postsIn(channel).length;
  const replay = await context.bridge(['dlq', 'replay', '--stack', stack.stackName, '--event-id', eventId]);
  context.record(
    `slack outage: npx bridge dlq replay --stack ${stack.stackName}`,
    replay.code === 0,
    `exit ${replay.code}: ${replay.stdout} ${replay.stderr}`.slice(0, 600),
  );
  await context.waitFor('the replayed digest', () => (context.postsIn(channel).length > before ? true : undefined), 30_000);
  await stack.settle(10_000);
  const posted = context.postsIn(channel).length - before;
  context.record('slack outage: the replayed digest is posted exactly once', posted === 1, `${posted} digests`);
}

/** A new webhook secret added with `bridge secrets signing add`: deliveries signed with either verify. */
export async function rotationScenario(context: ScenarioContext): Promise<void> {
  const { stack, values } = context;
  const next = `whsec_${randomBytes(16).toString('hex')}`;
  const added = await context.bridge(['secrets', 'signing', 'add', '--stack', stack.stackName], `${next}\n`);
  context.record(
    `rotation: npx bridge secrets signing add --stack ${stack.stackName}`,
    added.code === 0,
    lastLine(added.stderr || added.stdout),
  );
  // A new environment reads the secret at once; a warm one within SECRETS_CACHE_SECONDS.
  stack.functionOfType('WebhookIngest').recycle();
  const withNew = await context.deliver(context.runCompletedBody(), { secret: next });
  const withOld = await context.deliver(context.runCompletedBody(), { secret: values.webhookSecret });
  context.record('rotation: a delivery signed with the new secret is accepted', withNew.status === 200, answerOf(withNew));
  context.record('rotation: the old secret still verifies until removed', withOld.status === 200, `HTTP ${withOld.status}`);
}

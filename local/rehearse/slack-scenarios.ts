/**
 * The Slack app's side of the stack, as Slack calls it: a signed slash command (and a deferred answer
 * that cannot be delivered), a button, forged and foreign requests, a replayed request, and a flood
 * past the Slack routes' own throttle.
 */
import { Agent } from 'node:http';
import { HTTP_PATHS } from '../../shared/contracts';
import { answerOf, requestStatus, type ScenarioContext } from './scenario-context';
import { channelSubscribed, findButton, recordedResponseUrl, slashCommandForm } from './slack-requests';

export async function slashCommandScenario(context: ScenarioContext): Promise<void> {
  const answer = await context.slackRequest(context.outputs['SlackCommandsUrl']!, slashCommandForm(context, 'help'));
  context.record('slash command: signed /visibility help is answered', answer.status === 200, answerOf(answer));
  // A deferred answer the bridge can never deliver (a response_url it refuses to call) is retried from
  // the commands' own queue, then rests in their DLQ: its event source, redrive and alarm metric.
  const dlqUrl = context.outputs['CommandsDlqUrl']!;
  const form = slashCommandForm(context, 'projects', 'https://answers.invalid/never');
  const deferred = await context.slackRequest(context.outputs['SlackCommandsUrl']!, form);
  if (deferred.status !== 200) throw new Error(`/visibility projects was not accepted: ${answerOf(deferred)}`);
  await context.waitFor('the undeliverable command in the commands DLQ', async () =>
    (await context.stack.queueCounts(dlqUrl)).visible > 0 ? true : undefined,
  );
  context.record(
    'slash command: an answer that cannot be delivered rests in the commands DLQ',
    deferred.status === 200,
    `HTTP ${deferred.status}`,
  );
}

export async function buttonScenario(context: ScenarioContext): Promise<void> {
  const ts = context.digestTs;
  if (ts === undefined) throw new Error('no digest to click on (the digest scenario did not post)');
  const slack = context.stack.peers.slack;
  slack.connectApp({
    commandsUrl: context.outputs['SlackCommandsUrl']!,
    interactionsUrl: context.outputs['SlackInteractionsUrl']!,
    signingSecret: context.values.slackSigningSecret,
  });
  const message = slack.messages(context.defaultChannel).find((m) => m.ts === ts);
  const actionId = findButton(message?.blocks ?? [], /mute/i);
  if (actionId === undefined) throw new Error('the digest has no Mute button');
  const answer = await context.withEgressFetch(() => slack.clickButton({ channel: context.defaultChannel, ts, actionId }));
  context.record('button: Mute 7 days on the digest is answered', answer.status === 200, `HTTP ${answer.status}`);
}

export async function forgedScenario(context: ScenarioContext): Promise<void> {
  const forged = await context.deliver(context.runCompletedBody(), { secret: 'whsec_not_the_real_one' });
  context.record('forged delivery: refused 401', forged.status === 401, `HTTP ${forged.status} ${forged.text}`);
  const unsigned = await context.slackRequest(context.outputs['SlackCommandsUrl']!, 'command=%2Fvisibility&text=list', 'wrong-secret');
  context.record('forged Slack request: refused 401', unsigned.status === 401, `HTTP ${unsigned.status}`);
}

/** A signed command from another workspace, and one for another app: 403, and nothing done. */
export async function foreignScenario(context: ScenarioContext): Promise<void> {
  const url = context.outputs['SlackCommandsUrl']!;
  const channel = 'C0FOREIGN';
  const line = `subscribe ${context.project()}`;
  for (const [who, origin] of [
    ['another workspace', { teamId: 'T0OTHERTEAM', channel }],
    ['another app', { appId: 'A0OTHERAPP', channel }],
  ] as const) {
    const responses = recordedResponseUrl('foreign');
    const answer = await context.slackRequest(url, slashCommandForm(context, line, responses.url, origin));
    await context.stack.settle(10_000);
    const subscribed = await channelSubscribed(context, channel);
    context.record(
      `foreign: a signed /visibility ${line.split(' ')[0]} from ${who} is refused (403)`,
      answer.status === 403,
      answerOf(answer),
    );
    context.record(
      `foreign: nothing was done for ${who} (no answer, no subscription of ${channel})`,
      responses.answers(context) === 0 && !subscribed,
      `answers: ${responses.answers(context)}, subscribed: ${subscribed}`,
    );
  }
}

/** The same signed command twice (a replay inside the 5-minute tolerance): both answered, acted on once. */
export async function replayScenario(context: ScenarioContext): Promise<void> {
  const url = context.outputs['SlackCommandsUrl']!;
  const channel = 'C0REPLAY';
  const responses = recordedResponseUrl('replay');
  const form = slashCommandForm(context, `subscribe ${context.project()}`, responses.url, { channel });
  const timestamp = Math.floor(Date.now() / 1000);
  const first = await context.slackRequest(url, form, undefined, timestamp);
  if (first.status !== 200) throw new Error(`the first signed subscribe was not accepted: ${answerOf(first)}`);
  await context.waitFor('the deferred answer to the first request', () => (responses.answers(context) > 0 ? true : undefined));
  await context.stack.settle(10_000);
  const answered = responses.answers(context);
  const subscribed = await channelSubscribed(context, channel);
  const replayed = await context.slackRequest(url, form, undefined, timestamp);
  await context.stack.settle(10_000);
  context.record(
    'replay: the first signed subscribe is acted on (subscribed, answered)',
    first.status === 200 && subscribed,
    `HTTP ${first.status}, subscribed: ${subscribed}`,
  );
  context.record(
    'replay: the same request again is answered (200) but not acted on again',
    replayed.status === 200 && responses.answers(context) === answered,
    `HTTP ${replayed.status} ${replayed.text.slice(0, 80)}; answers ${answered} → ${responses.answers(context)}`,
  );
}

/**
 * A flood of unsigned requests on POST /slack/commands, past that route's own burst: 429 there, while
 * the service's signed deliveries, sent in the middle of it, are still accepted (the webhook's share of
 * the stage throttle is untouched).
 */
export async function slackFloodScenario(context: ScenarioContext): Promise<void> {
  const url = new URL(`${context.stack.gateway.url}${HTTP_PATHS.slackCommands}`);
  const count = 600;
  // Every request on its own connection, so all arrive at once: past the burst the gateway answers 429 without
  // running the function. Fewer connections paced the flood at the function's speed, on a busy machine below the route's rate.
  const agent = new Agent({ keepAlive: true, maxSockets: count });
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  let firstThrottled: () => void = () => undefined;
  const throttledOnce = new Promise<void>((resolve) => (firstThrottled = resolve));
  const flood = Promise.all(
    Array.from({ length: count }, () =>
      requestStatus(url, agent, { method: 'POST', headers, body: 'command=%2Fvisibility&text=help' }, (status) => {
        if (status === 429) firstThrottled();
      }),
    ),
  );
  await Promise.race([throttledOnce, flood]);
  const deliveries = await Promise.all(Array.from({ length: 3 }, () => context.deliver(context.runCompletedBody())));
  const statuses = await flood;
  agent.destroy();
  await context.stack.settle(30_000);
  const throttled = statuses.filter((status) => status === 429).length;
  context.record(
    `slack flood: ${count} unsigned requests at once on POST ${HTTP_PATHS.slackCommands} past its own burst are throttled (429)`,
    throttled > 0,
    `${throttled} answered 429`,
  );
  context.record(
    'slack flood: the service’s signed deliveries sent during it are accepted (the webhook keeps its throttle)',
    deliveries.every((delivery) => delivery.status >= 200 && delivery.status < 300),
    deliveries.map((delivery) => `HTTP ${delivery.status}`).join(', '),
  );
}

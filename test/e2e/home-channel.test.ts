/**
 * One channel is one channel (issue 27): the home channel is configured by its id, Slack reports
 * commands and clicks by id, so a subscription made there, a settings button clicked there and the
 * home route all name the same channel, and every run is posted there once. A home channel given by
 * name never gets that far: the stack refuses it at start (the functions' cold-start check).
 * Real peers: dynalite, the local SQS server, the simulator and the local Slack server, which posts
 * `#visibility-digests` into its channel C0LOCALDIGEST and reports clicks and commands by id, as Slack does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { LOCAL_DEFAULTS, type LocalStack } from '../../local/stack';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { eventIdOf, simulatorOf, slackOf, startTestStack } from './helpers';

const HOME = LOCAL_DEFAULTS.slackChannel;
let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

/** A run of `projectId`: its top-level posts, per channel. */
async function run(projectId: string): Promise<Map<string, string[]>> {
  const sent = simulatorOf(stack).triggerRun(projectId);
  await sent.delivered;
  await stack.waitForIdle();
  const posts = new Map<string, string[]>();
  for (const m of slackOf(stack).messages())
    if (m.thread_ts === undefined && eventIdOf(m) === sent.event.id) posts.set(m.channel, [...(posts.get(m.channel) ?? []), m.ts]);
  return posts;
}

describe('the home channel', () => {
  it('is one channel whatever leads there: home route, a subscription by command, a button click', async () => {
    expect(HOME).toBe('C0LOCALDIGEST');
    expect(slackOf(stack).channelName(HOME)).toBe('visibility-digests');
    const projectId = stack.projectIds[0]!;
    const project = simulatorOf(stack)
      .data.projects()
      .find((p) => p.id === projectId)!;

    const first = await run(projectId);
    expect([...first.keys()]).toEqual([HOME]);
    const [digestTs] = first.get(HOME)!;

    // "Only changes" on the home route's digest: Slack reports the channel by id, the change is keyed by it.
    const click = await slackOf(stack).clickButton({ channel: '#visibility-digests', ts: digestTs!, actionId: ACTION_IDS.onlyChanges });
    expect(click.status).toBe(200);
    await stack.waitForIdle();
    // And a subscribe typed in the channel, by its name in the message box: the command carries the id too.
    await slackOf(stack).sendCommand({ channel: '#visibility-digests', line: `/visibility subscribe ${project.name}` });
    await stack.waitForIdle();

    const store = new DynamoSubscriptionStore(stack.dynamo.client, stack.dynamo.tableName);
    expect(await store.forProject(projectId)).toMatchObject([{ channel: HOME, mode: 'changes' }]);

    for (let i = 0; i < 2; i++) {
      const posts = await run(projectId);
      expect([...posts.keys()]).toEqual([HOME]);
      expect(posts.get(HOME)).toHaveLength(1);
    }
  });

  it('given by name, stops the start with the variable, the stage-file key and where to find the id', async () => {
    await expect(startTestStack({ slackChannel: '#visibility-digests' })).rejects.toThrow(
      /SLACK_DEFAULT_CHANNEL holds "#visibility-digests", which is not a channel id; the stage file's "slackDefaultChannel" must be a Slack channel id \(C… or G…\).*About tab/,
    );
  });
});

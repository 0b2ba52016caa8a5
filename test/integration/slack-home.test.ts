/**
 * The App Home portfolio end to end on the worker's side: a `slack_home` message on the commands
 * queue, answered by the digest function's wiring against dynalite (snapshots, subscriptions), the
 * service simulator (the projects) and the local Slack server, whose `views.publish` checks the view
 * as Slack does. Subscribing from the tab goes through the same policy as `/visibility subscribe`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { SlackWorkspace } from '../../shared/adapters/slack-workspace';
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import type { WebhookEvent } from '../../shared/events';
import { staticSecret } from '../../shared/secrets';
import { HOME_ACTION_IDS } from '../../shared/slack-app/home/actions';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';
import type { SlackAccessPolicy } from '../../shared/slack-app/ports';
import { peerDigestDeps, startDigestPeers, steppedTime, type DigestPeers } from '../support/digest-peers';
import { RecordingObserver } from '../support/recording-observer';
import { enqueue, invokeDigestBatch } from '../support/sqs-records';
import type { TestWiring } from '../support/worker-wiring';

const TABLE = 'bridge-home';
const TOKEN = 'xoxb-home';
const T0 = Date.UTC(2026, 10, 20, 9, 0);
const LEAD = 'U0LEAD';

let peers: DigestPeers;
let projects: string[];
let observer: RecordingObserver;
let subscriptions: DynamoSubscriptionStore;
let now: number;

function workspace(): SlackWorkspace {
  return new SlackWorkspace({ token: staticSecret(TOKEN), slackApiUrl: peers.slack.apiUrl });
}

function deps(access: SlackAccessPolicy = DEFAULT_SLACK_ACCESS_POLICY): TestWiring {
  return {
    ...peerDigestDeps(peers, { slackToken: TOKEN, maxAttempts: 2 }),
    channels: { defaultChannel: 'C0DIGESTS', byProject: {} },
    subscriptions,
    responder: { respond: () => Promise.resolve() },
    slackApp: { access, groups: workspace(), channels: workspace(), views: workspace() },
    ...steppedTime(
      () => now,
      (ms) => (now += ms),
    ),
    log: observer,
    metrics: observer,
  };
}

async function digest(projectId: string): Promise<void> {
  const run = peers.sim.advanceRun(projectId);
  const event: WebhookEvent = {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(now).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
  await enqueue(peers.sqs, peers.queueUrl, event);
  expect((await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(), observer)).failed.size).toBe(0);
}

async function home(request: Record<string, unknown>, access?: SlackAccessPolicy) {
  await enqueue(
    peers.sqs,
    peers.queueUrl,
    JSON.stringify({ kind: QUEUE_MESSAGE_KINDS.slackHome, userId: LEAD, page: 0, receivedAtMs: now, ...request }),
  );
  return invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(access), observer, 'commands');
}

const viewText = () => JSON.stringify(peers.slack.homeView(LEAD)?.view.blocks ?? []);

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'home', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  projects = peers.sim.projectIds();
  // The stage's subscriptionDefaultMode: what a subscribe from the tab creates.
  subscriptions = new DynamoSubscriptionStore(peers.dynamo.client, TABLE, 'changes');
});

afterAll(async () => {
  await peers.close();
});

beforeEach(async () => {
  observer = new RecordingObserver();
  now = T0;
  await peers.reset();
});

describe('App Home portfolio', () => {
  it("publishes every project with its digest's mark, where its digests go (muted ones said), and the digest link", async () => {
    const [first] = projects as [string];
    await digest(first);
    await subscriptions.subscribe({ projectId: first, projectName: 'first', channel: 'C0MUTED', actor: { userId: LEAD }, nowMs: now });
    await subscriptions.change(first, 'C0MUTED', { kind: 'mute', untilMs: now + 86_400_000, label: '1d' }, { userId: LEAD }, now);

    expect((await home({})).failed.size).toBe(0);
    const published = peers.slack.homeView(LEAD);
    expect(published?.view.type).toBe('home');
    expect(published?.view.blocks.length).toBeLessThanOrEqual(100);
    const text = viewText();
    expect(text.match(/home_project:/g)).toHaveLength(projects.length);
    expect(text).toContain('<#C0DIGESTS> (home)');
    expect(text).toContain('<#C0MUTED> (muted)');
    // The first project's digest is in the home channel: its button opens that message.
    const digestTs = peers.slack.messages('C0DIGESTS').find((m) => !m.thread_ts)?.ts ?? '';
    expect(text).toContain(`https://slack.com/archives/C0DIGESTS/p${digestTs.replace('.', '')}`);
    expect(text).toContain(HOME_ACTION_IDS.subscribe);
  });

  it('subscribes a channel picked on the tab in the default mode, and says so at the top of the republished tab', async () => {
    const [first] = projects as [string];
    peers.slack.inviteBot('C0PICKED');
    expect((await home({ subscribe: { projectId: first, channel: 'C0PICKED' } })).failed.size).toBe(0);
    expect((await subscriptions.forChannel('C0PICKED')).map((s) => [s.projectId, s.mode])).toEqual([[first, 'changes']]);
    expect(viewText()).toContain('subscribed');
    expect(viewText()).toContain('<#C0PICKED>');
  });

  it('shows a user the policy does not let change no change buttons, and refuses their subscribe', async () => {
    const [first] = projects as [string];
    const onlyAna: SlackAccessPolicy = { changes: { kind: 'users', userIds: ['U0ANA'] }, changeChannels: {} };
    expect((await home({ subscribe: { projectId: first, channel: 'C0NOPE' } }, onlyAna)).failed.size).toBe(0);
    expect(await subscriptions.forChannel('C0NOPE')).toEqual([]);
    expect(viewText()).not.toContain(HOME_ACTION_IDS.subscribe);
    expect(viewText()).toContain('Only');
  });
});

describe("the local Slack server's views.publish", () => {
  it('refuses what Slack refuses: more than 100 blocks, a view that is not a Home view', async () => {
    const views = workspace();
    const section = { type: 'section', text: { type: 'mrkdwn', text: 'x' } };
    await expect(views.publish(LEAD, { type: 'home', blocks: Array<unknown>(101).fill(section), private_metadata: '' })).rejects.toThrow(
      /invalid_arguments/,
    );
    await expect(views.publish(LEAD, { type: 'modal', blocks: [section], private_metadata: '' } as never)).rejects.toThrow(
      /invalid_arguments/,
    );
    expect(peers.slack.homeView(LEAD)).toBeUndefined();
    await views.publish(LEAD, { type: 'home', blocks: Array<unknown>(100).fill(section), private_metadata: 'page=0' });
    expect(peers.slack.homeView(LEAD)?.view.blocks).toHaveLength(100);
  });
});

/**
 * A subscribed channel Slack refuses for good (the bot isn't in it): the run goes on without it and
 * is not retried for it, the snapshot is saved, the subscription is marked broken (later runs don't
 * ask Slack) and whoever subscribed it is told once, in the home channel. The home channel refusing
 * still fails the run. Real peers: dynalite, the local SQS server, the service simulator, and a local
 * Slack server whose bot is a member of only some channels (`memberChannels`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import type { TestWiring } from '../support/worker-wiring';
import type { WebhookEvent } from '../../shared/events';
import { LocalSlackServer } from '../../local/slack/server';
import { RecordingObserver } from '../support/recording-observer';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { enqueue, invokeDigestBatch, receiveRecords } from '../support/sqs-records';

const TABLE = 'bridge-refused';
const TOKEN = 'xoxb-refused';
const ANA = { userId: 'U0ANA' };
/** The bot is in these; C0OUTSIDE and C0HOMELESS exist but it was never invited. */
const MEMBER_OF = ['digests', 'C0MEMBER'];
const INJECTION = 'Acme` <!channel> <https://evil.example/login|click to re-authenticate> `';

let peers: DigestPeers;
let slack: LocalSlackServer;
let projectA: string;
let projectB: string;
let observer: RecordingObserver;
let subscriptions: DynamoSubscriptionStore;
let store: DynamoDigestStore;
let now = Date.UTC(2026, 10, 21, 9, 0);

function deps(overrides: Partial<TestWiring> = {}): TestWiring {
  return {
    readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey, sleep: () => Promise.resolve() }),
    slack: createSlackPoster({ token: TOKEN, slackApiUrl: slack.apiUrl, sleep: () => Promise.resolve(), maxAttempts: 2 }),
    store,
    deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
    channels: { defaultChannel: '#digests', byProject: {} },
    subscriptions,
    clock: { now: () => now },
    log: observer,
    metrics: observer,
    ...overrides,
  };
}

let minute = 0;
function runEvent(projectId: string): WebhookEvent {
  const run = peers.sim.advanceRun(projectId);
  minute += 1;
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(Date.UTC(2026, 10, 21, 10, minute)).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

async function deliver(options: Partial<TestWiring>, event: WebhookEvent) {
  await enqueue(peers.sqs, peers.queueUrl, event);
  const { records, failed } = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(options), observer);
  return { records, failed };
}

const topLevel = (channel: string) => slack.messages(channel).filter((m) => !m.thread_ts);
const postsTo = (channel: string) => slack.calls('chat.postMessage').filter((c) => c.channel === channel).length;
const notices = () => topLevel('#digests').filter((m) => m.text?.includes('can no longer be posted'));

async function subscribe(projectId: string, channel: string, projectName = projectId) {
  return subscriptions.subscribe({ projectId, projectName, channel, actor: ANA, nowMs: now });
}

async function subscriptionOf(projectId: string, channel: string) {
  return (await subscriptions.forProject(projectId)).find((s) => s.channel === channel);
}

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'refused', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  slack = await LocalSlackServer.start({ tokens: [TOKEN], memberChannels: MEMBER_OF });
  [projectA, projectB] = peers.sim.projectIds() as [string, string];
  subscriptions = new DynamoSubscriptionStore(peers.dynamo.client, TABLE);
  store = new DynamoDigestStore(peers.dynamo.client, { tableName: TABLE, leaseMs: 600_000, retentionSeconds: 86400 });
});

afterAll(async () => {
  await slack.close();
  await peers.close();
});

beforeEach(async () => {
  observer = new RecordingObserver();
  now += 3_600_000;
  await peers.reset();
  slack.reset();
  for (const s of await subscriptions.listAll()) await subscriptions.unsubscribe(s.projectId, s.channel);
});

describe('a subscribed channel Slack refuses', () => {
  it('is left out of the run: no retry, no DLQ, the snapshot saved, the subscription marked broken, one notice', async () => {
    await subscribe(projectA, 'C0MEMBER');
    await subscribe(projectA, 'C0OUTSIDE', INJECTION);
    const event = runEvent(projectA);

    const first = await deliver({}, event);
    expect(first.failed.size).toBe(0);
    expect(topLevel('C0MEMBER')).toHaveLength(1);
    expect(topLevel('#digests')).toHaveLength(2); // the digest, and the notice
    expect(
      slack
        .calls('chat.postMessage')
        .filter((c) => c.channel === 'C0OUTSIDE')
        .map((c) => c.error),
    ).toEqual(['not_in_channel']);
    expect((await store.getSnapshot(projectA))?.lastRunId).toBe(event.data['run_id']);
    expect((await subscriptionOf(projectA, 'C0OUTSIDE'))?.broken).toEqual({ code: 'not_in_channel', atMs: now });
    // Marked once: a concurrent marker (or a subscription gone meanwhile) gets null, so sends no second notice.
    expect(await subscriptions.markBroken(projectA, 'C0OUTSIDE', 'not_in_channel', now)).toBeNull();
    expect(await subscriptions.markBroken(projectA, 'C0NEVER', 'not_in_channel', now)).toBeNull();
    expect(observer.countOf('DigestChannelRefused')).toBe(1);
    expect(observer.countOf('DigestFailed')).toBe(0);
    expect(observer.countOf('DigestPosted')).toBe(1);
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);

    const [notice] = notices();
    expect(notice?.text).toContain('<@U0ANA>');
    expect(notice?.text).toContain('<#C0OUTSIDE>');
    expect(notice?.text).toContain('not_in_channel');
    // The stored project name goes through the digest's text safety: no ping, no link, no code span.
    expect(notice?.text).not.toMatch(/<!|<http|`Acme/);

    slack.reset();
    observer = new RecordingObserver();
    expect((await deliver({}, runEvent(projectA))).failed.size).toBe(0);
    expect(postsTo('C0OUTSIDE')).toBe(0); // skipped without asking Slack
    expect(notices()).toHaveLength(0); // told once
    expect(topLevel('C0MEMBER')).toHaveLength(1);
    expect(observer.countOf('DigestChannelRefused')).toBe(0);
  });

  it('is tried again once someone subscribes it again', async () => {
    await subscribe(projectA, 'C0OUTSIDE');
    await deliver({}, runEvent(projectA));
    expect((await subscriptionOf(projectA, 'C0OUTSIDE'))?.broken).toBeDefined();

    const again = await subscribe(projectA, 'C0OUTSIDE');
    expect(again.status).toBe('subscribed');
    expect(again.subscription.broken).toBeUndefined();
    slack.reset();
    expect((await deliver({}, runEvent(projectA))).failed.size).toBe(0);
    expect(postsTo('C0OUTSIDE')).toBe(1); // asked again (and refused again: the bot still isn't there)
    expect(notices()).toHaveLength(1);
  });

  it('without a home channel, says so in an error log line and the metric', async () => {
    await subscribe(projectA, 'C0MEMBER');
    await subscribe(projectA, 'C0OUTSIDE');
    const result = await deliver({ channels: { defaultChannel: '', byProject: {} } }, runEvent(projectA));
    expect(result.failed.size).toBe(0);
    expect(topLevel('C0MEMBER')).toHaveLength(1);
    expect(observer.countOf('DigestChannelRefused')).toBe(1);
    const line = observer.entries.find((e) => e.level === 'error' && e.message.includes('no home channel'));
    expect(line?.fields).toMatchObject({ channel: 'C0OUTSIDE', code: 'not_in_channel' });
  });
});

describe('the home channel refusing', () => {
  it('still fails the run (an operator fix), even when it has a subscription of its own', async () => {
    await subscribe(projectB, 'C0HOMELESS');
    await subscribe(projectB, 'C0MEMBER');
    const result = await deliver({ channels: { defaultChannel: '#digests', byProject: { [projectB]: 'C0HOMELESS' } } }, runEvent(projectB));
    expect(result.failed.size).toBe(1);
    expect(observer.countOf('DigestFailed')).toBe(1);
    expect(observer.countOf('DigestChannelRefused')).toBe(0);
    expect((await subscriptionOf(projectB, 'C0HOMELESS'))?.broken).toBeUndefined();
    expect(topLevel('C0MEMBER')).toHaveLength(1);
    expect(await store.getSnapshot(projectB)).toBeNull();
  });
});

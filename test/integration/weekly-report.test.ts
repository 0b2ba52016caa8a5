/**
 * The weekly report end to end on real peers: runs digested into snapshots (dynalite, the simulator,
 * the local Slack server), then weekly sweep messages through the digest queue. Exactly once per
 * channel and week, paced, a failure counted and retried by the next sweep, the schedule honoured.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIGEST_METRICS } from '../../shared/contracts';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoChannelPacer } from '../../shared/adapters/dynamo-channel-pacer';
import { DynamoWeeklyStore } from '../../shared/adapters/dynamo-weekly-store';
import type { TestWiring } from '../support/worker-wiring';
import type { WebhookEvent } from '../../shared/events';
import { findUnescapedMarkup } from '../../shared/slack-text';
import { weeklySweepMessage } from '../../shared/weekly/message';
import { answerWeekly } from '../../shared/slack-app/weekly-command';
import { accessOf, parseCommandText } from '../../shared/slack-app/commands';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';
import type { InlineDeps } from '../../shared/slack-app/ports';
import { RecordingObserver } from '../support/recording-observer';
import { peerDigestDeps, startDigestPeers, steppedTime, type DigestPeers } from '../support/digest-peers';
import { enqueue, invokeDigestBatch } from '../support/sqs-records';

const TABLE = 'bridge-weekly';
const TOKEN = 'xoxb-weekly';
const CHANNEL = 'C0WEEK';
const ANA = { userId: 'U0ANA' };
/** Monday 2026-11-23 09:05 in Berlin (08:05 UTC): the default schedule's time has just come. */
const MONDAY_0905_BERLIN = Date.UTC(2026, 10, 23, 8, 5);

let peers: DigestPeers;
let projects: string[];
let observer: RecordingObserver;
let subscriptions: DynamoSubscriptionStore;
let weeklyStore: DynamoWeeklyStore;
let now: number;

function deps(): TestWiring {
  return {
    ...peerDigestDeps(peers, { slackToken: TOKEN, maxAttempts: 1 }),
    channels: { defaultChannel: '#digests', byProject: {} },
    subscriptions,
    pacer: new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 1 } }),
    weekly: {
      store: weeklyStore,
      options: { timeZone: 'Europe/Berlin', defaultChannel: '#digests', projectChannels: {} },
    },
    ...steppedTime(
      () => now,
      (ms) => (now += ms),
    ),
    log: observer,
    metrics: observer,
  };
}

function runEvent(projectId: string, createdAtMs: number): WebhookEvent {
  const run = peers.sim.advanceRun(projectId);
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(createdAtMs).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

async function deliver(...bodies: (WebhookEvent | string)[]) {
  for (const body of bodies) await enqueue(peers.sqs, peers.queueUrl, body);
  return invokeDigestBatch(peers.sqs, peers.queueUrl, deps, observer);
}

function sweep(options: { channel?: string; now?: boolean } = {}): string {
  return JSON.stringify(weeklySweepMessage(options));
}

function reports(channel: string) {
  return peers.slack.messages(channel).filter((m) => !m.thread_ts && JSON.stringify(m).includes('Weekly visibility report'));
}

function threadOf(channel: string, ts: string | undefined) {
  return peers.slack.messages(channel).filter((m) => m.thread_ts !== undefined && m.thread_ts === ts);
}

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'weekly', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  projects = peers.sim.projectIds().slice(0, 2);
  subscriptions = new DynamoSubscriptionStore(peers.dynamo.client, TABLE);
  weeklyStore = new DynamoWeeklyStore(peers.dynamo.client, { tableName: TABLE, leaseMs: 600_000 });
  observer = new RecordingObserver();
  // Two weeks of daily runs of the first project: the week's changes, rivals and engines have history.
  for (let day = 12; day >= 0; day -= 3) {
    now = MONDAY_0905_BERLIN - day * 24 * 3600_000 - 3600_000;
    const [first] = projects as [string];
    expect((await deliver(runEvent(first, now))).failed.size).toBe(0);
  }
  for (const projectId of projects)
    await subscriptions.subscribe({ projectId, projectName: `Project ${projectId}`, channel: CHANNEL, actor: ANA, nowMs: now });
});

afterAll(async () => {
  await peers.close();
});

beforeEach(() => {
  observer = new RecordingObserver();
});

describe('weekly report', () => {
  it('posts the portfolio and a line per subscribed project, its details in the thread, sanitized, never twice in a week', async () => {
    now = MONDAY_0905_BERLIN;
    await weeklyStore.putSetting(CHANNEL, { enabled: true, changedBy: ANA.userId, changedAtMs: now - 60_000 });
    // Two sweeps in one batch run side by side: the week's claim lets one post.
    const { failed } = await deliver(sweep({ channel: CHANNEL, now: true }), sweep({ channel: CHANNEL, now: true }));
    expect(failed.size).toBe(0);
    const posted = reports(CHANNEL);
    expect(posted).toHaveLength(1);
    const blocks = (posted[0]?.blocks ?? []) as { text?: { text?: string } }[];
    // The first project has runs this week (whatever the simulator's figures did), the second none yet.
    expect(blocks[0]?.text?.text).toMatch(/^\*1 of 2 projects (worse|better|mixed|steady), 1 without runs/);
    const text = JSON.stringify(blocks);
    // Names are cut to fit a line.
    for (const projectId of projects) expect(text).toContain(`Project ${projectId.slice(0, 20)}`);
    expect(text).toContain('no run digested yet');
    expect(text).toContain('details and charts in the thread');
    for (const block of blocks) expect(findUnescapedMarkup(block.text?.text ?? '', { allowLinks: true })).toBeNull();
    const details = threadOf(CHANNEL, posted[0]?.ts);
    expect(details).toHaveLength(1);
    expect(JSON.stringify(details[0]?.blocks)).toMatch(/runs? this week/);
    expect(observer.countOf(DIGEST_METRICS.weeklyReportPosted)).toBe(1);

    // The next sweep of the same week posts nothing new.
    now += 15 * 60_000;
    expect((await deliver(sweep({ channel: CHANNEL, now: true }))).failed.size).toBe(0);
    expect(reports(CHANNEL)).toHaveLength(1);
  });

  it('follows the schedule: the home channel gets its report once Monday 09:00 has come in the stage zone', async () => {
    now = MONDAY_0905_BERLIN - 10 * 60_000; // 08:55 in Berlin
    expect((await deliver(sweep())).failed.size).toBe(0);
    expect(reports('#digests')).toHaveLength(0);
    now = MONDAY_0905_BERLIN;
    expect((await deliver(sweep())).failed.size).toBe(0);
    expect(reports('#digests')).toHaveLength(1);
    // A channel that turned the report off gets none, even when named.
    await weeklyStore.putSetting('C0OFF', { enabled: false, changedBy: ANA.userId, changedAtMs: now - 1 });
    expect((await deliver(sweep({ channel: 'C0OFF', now: true }))).failed.size).toBe(0);
    expect(reports('C0OFF')).toHaveLength(0);
  });

  it('refuses and logs a sweep naming a channel that is neither home nor opted in, posting nothing there', async () => {
    now = MONDAY_0905_BERLIN;
    const [first] = projects as [string];
    // Subscribed, but it never asked for a weekly report.
    await subscriptions.subscribe({ projectId: first, projectName: 'Stranger project', channel: 'C0STRANGER', actor: ANA, nowMs: now });
    expect((await deliver(sweep({ channel: 'C0STRANGER', now: true }), sweep({ channel: 'C0NOBODY', now: true }))).failed.size).toBe(0);
    expect(reports('C0STRANGER')).toHaveLength(0);
    expect(peers.slack.messages('C0NOBODY')).toHaveLength(0);
    expect(observer.entries.filter((e) => e.message.startsWith('weekly sweep refused')).map((e) => e.fields['channel'])).toEqual(
      expect.arrayContaining(['C0STRANGER', 'C0NOBODY']),
    );
  });

  it('counts a failed report, keeps the sweep green, and posts it once on the next sweep', async () => {
    const channel = 'C0FAIL';
    const [first] = projects as [string];
    await subscriptions.subscribe({ projectId: first, projectName: 'Fail project', channel, actor: ANA, nowMs: now });
    await weeklyStore.putSetting(channel, { enabled: true, day: 1, minuteOfDay: 9 * 60, changedBy: ANA.userId, changedAtMs: 0 });
    now = MONDAY_0905_BERLIN;
    peers.slack.injectFault({ method: 'chat.postMessage', channel, times: 1, kind: 'slack_error', error: 'internal_error' });
    expect((await deliver(sweep())).failed.size).toBe(0);
    expect(observer.countOf(DIGEST_METRICS.weeklyReportFailed)).toBe(1);
    expect(reports(channel)).toHaveLength(0);
    now += 15 * 60_000;
    expect((await deliver(sweep())).failed.size).toBe(0);
    expect(reports(channel)).toHaveLength(1);
    now += 15 * 60_000;
    expect((await deliver(sweep())).failed.size).toBe(0);
    expect(reports(channel)).toHaveLength(1);
  });
});

describe('/visibility weekly', () => {
  function inlineDeps(): InlineDeps {
    return {
      access: DEFAULT_SLACK_ACCESS_POLICY,
      groups: { membersOf: () => Promise.resolve(new Set<string>()) },
      metrics: observer,
      log: observer,
      store: subscriptions,
      clock: { now: () => now },
      shares: { encode: () => Promise.resolve(undefined) },
      weekly: { store: weeklyStore, timeZone: 'Europe/Berlin' },
    };
  }
  const context = { channel: 'C0SET', actor: ANA, responseUrl: 'https://hooks.slack.com/commands/x' };

  it("is a change, stores the channel's schedule, announces the next report and lists it in the channel's history", async () => {
    expect(accessOf('weekly')).toBe('change');
    now = MONDAY_0905_BERLIN;
    const command = parseCommandText('weekly fri 17:30');
    if (command.kind !== 'weekly') throw new Error(`not parsed: ${JSON.stringify(command)}`);
    const reply = await answerWeekly(command, context, inlineDeps());
    expect(reply.response_type).toBe('in_channel');
    expect(reply.text).toContain("<@U0ANA> set this channel's weekly report to Friday 17:30 (Europe/Berlin)");
    // Friday 2026-11-27 17:30 in Berlin = 16:30 UTC.
    expect(reply.text).toContain(`<!date^${Date.UTC(2026, 10, 27, 16, 30) / 1000}^`);
    expect((await weeklyStore.settings()).get('C0SET')).toMatchObject({ enabled: true, day: 5, minuteOfDay: 1050, changedBy: 'U0ANA' });
    const off = parseCommandText('weekly off');
    if (off.kind !== 'weekly') throw new Error('not parsed');
    expect((await answerWeekly(off, context, inlineDeps())).text).toContain("turned this channel's weekly report off");
    expect((await weeklyStore.settings()).get('C0SET')).toMatchObject({ enabled: false, day: 5 });
    const history = await subscriptions.recentChanges('C0SET');
    expect(history.map((e) => e.what)).toEqual(['turned off', 'set to Friday 17:30 (Europe/Berlin)']);
  });
});

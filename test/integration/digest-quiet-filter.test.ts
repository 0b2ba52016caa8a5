/**
 * Per-channel filters and quiet hours through the digest worker, against real peers: dynalite (the
 * bridge table), the local SQS server, the service simulator and the local Slack server. A fixed clock.
 * - quiet hours: runs inside a channel's window are held (once per event, retries included), nothing is
 *   posted there; after the window one catch-up lists them, posted exactly once even when two sweeps
 *   run side by side; a failed catch-up keeps the runs for the next sweep;
 * - filters: a run the channel's filter leaves nothing of posts nothing there and is counted.
 */
import { randomUUID } from 'node:crypto';
import { GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { QUEUE_MESSAGE_KINDS, TABLE as BRIDGE_TABLE } from '../../shared/contracts';
import type { TestWiring } from '../support/worker-wiring';
import { sweepCatchUps } from '../../shared/digest/held-digests';
import type { WebhookEvent } from '../../shared/events';
import { RecordingObserver } from '../support/recording-observer';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { enqueue, invokeDigestBatch, receiveRecords } from '../support/sqs-records';

const TABLE = 'bridge-quiet';
const PREFIXES = BRIDGE_TABLE.prefixes;
const TOKEN = 'xoxb-quiet';
const ANA = { userId: 'U0ANA' };
const NIGHT = { startMinute: 22 * 60, endMinute: 7 * 60, timeZone: 'UTC' };

let peers: DigestPeers;
let project: string;
let observer: RecordingObserver;
let subscriptions: DynamoSubscriptionStore;
let quietHours: DynamoQuietHoursStore;
let store: DynamoDigestStore;
let now = Date.UTC(2026, 10, 24, 12, 0);

function deps(): TestWiring {
  return {
    readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey, sleep: () => Promise.resolve() }),
    slack: createSlackPoster({ token: TOKEN, slackApiUrl: peers.slack.apiUrl, sleep: () => Promise.resolve(), maxAttempts: 1 }),
    store,
    deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
    channels: { defaultChannel: '#digests', byProject: {} },
    subscriptions,
    quietHours,
    options: { dashboardUrlTemplate: 'https://dash.example/p/{project_id}/runs/{run_id}' },
    clock: { now: () => now },
    log: observer,
    metrics: observer,
  };
}

function runEvent(): WebhookEvent {
  const run = peers.sim.advanceRun(project);
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(now).toISOString(),
    data: { project_id: project, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

async function deliver(...events: (WebhookEvent | string)[]) {
  for (const event of events) await enqueue(peers.sqs, peers.queueUrl, event);
  return invokeDigestBatch(peers.sqs, peers.queueUrl, deps, observer);
}

const topLevel = (channel: string) => peers.slack.messages(channel).filter((m) => !m.thread_ts);
const sweepMessage = JSON.stringify({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp });

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'quiet', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  [project] = peers.sim.projectIds() as [string];
  subscriptions = new DynamoSubscriptionStore(peers.dynamo.client, TABLE);
  quietHours = new DynamoQuietHoursStore(peers.dynamo.client, TABLE);
  store = new DynamoDigestStore(peers.dynamo.client, { tableName: TABLE, leaseMs: 600_000, retentionSeconds: 86400 });
});

afterAll(async () => {
  await peers.close();
});

beforeEach(async () => {
  observer = new RecordingObserver();
  now += 7 * 24 * 3_600_000;
  await peers.reset();
  for (const s of await subscriptions.listAll()) await subscriptions.unsubscribe(s.projectId, s.channel);
});

describe('quiet hours', () => {
  it('holds runs inside the window and posts one catch-up after it, exactly once under concurrent sweeps', async () => {
    await subscriptions.subscribe({ projectId: project, projectName: 'Northwind', channel: 'C0QUIET', actor: ANA, nowMs: now });
    await quietHours.setWindow('C0QUIET', NIGHT, ANA, now);
    const day = Math.floor(now / 86_400_000) * 86_400_000;

    now = day + 23 * 3_600_000; // 23:00 UTC: quiet
    const first = runEvent();
    expect((await deliver(first)).failed.size).toBe(0);
    now = day + 26 * 3_600_000; // 02:00 next day: still quiet
    const second = runEvent();
    // The first again (a redelivery) holds nothing more.
    expect((await deliver(second, first)).failed.size).toBe(0);

    expect(topLevel('C0QUIET')).toHaveLength(0);
    expect(topLevel('#digests')).toHaveLength(2); // the home channel has no quiet hours
    expect(observer.countOf('DigestHeld')).toBe(2);

    // A sweep during the window posts nothing.
    expect((await deliver(sweepMessage)).failed.size).toBe(0);
    expect(topLevel('C0QUIET')).toHaveLength(0);

    now = day + 31 * 3_600_000 + 60_000; // 07:01: the window is over
    // Two sweeps in one batch run side by side: one message.
    expect((await deliver(sweepMessage, sweepMessage)).failed.size).toBe(0);
    const posted = topLevel('C0QUIET');
    expect(posted).toHaveLength(1);
    const text = JSON.stringify(posted[0]?.blocks);
    expect(text).toContain('2 digests were held during quiet hours (22:00–07:00 UTC)');
    // Oldest first, newest last, each with its link.
    const firstAt = text.indexOf(`/runs/${String(first.data['run_id'])}|open`);
    const secondAt = text.indexOf(`/runs/${String(second.data['run_id'])}|open`);
    expect(firstAt).toBeGreaterThan(0);
    expect(secondAt).toBeGreaterThan(firstAt);
    expect(observer.countOf('QuietCatchUpPosted')).toBe(1);

    // Nothing is left to catch up on: a later sweep posts nothing, the index is empty.
    expect((await deliver(sweepMessage)).failed.size).toBe(0);
    expect(topLevel('C0QUIET')).toHaveLength(1);
    expect(await heldChannels()).toEqual([]);
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);
  });

  it('two sweeps racing on the store itself post once', async () => {
    await holdRun('C0RACE', 'e1', now);
    now += 60_000;
    const sweepDeps = { quietHours, slack: deps().slack, clock: { now: () => now }, log: observer, metrics: observer };
    const [a, b] = await Promise.all([sweepCatchUps(sweepDeps), sweepCatchUps(sweepDeps)]);
    expect([...a.posted, ...b.posted]).toEqual(['C0RACE']);
    expect(topLevel('C0RACE')).toHaveLength(1);
  });

  it('a catch-up Slack refuses keeps its runs; the next sweep posts them once', async () => {
    await holdRun('C0FAIL', 'e2', now);
    now += 60_000;
    peers.slack.injectFault({ method: 'chat.postMessage', channel: 'C0FAIL', kind: 'slack_error', error: 'internal_error', times: 1 });
    expect((await deliver(sweepMessage)).failed.size).toBe(0);
    expect(topLevel('C0FAIL')).toHaveLength(0);
    expect(observer.countOf('QuietCatchUpFailed')).toBe(1);
    expect(await heldChannels()).toEqual(['C0FAIL']);

    expect((await deliver(sweepMessage)).failed.size).toBe(0);
    expect(topLevel('C0FAIL')).toHaveLength(1);
    expect(await heldChannels()).toEqual([]);
  });
});

/** One run of the project held in `channel` at `atMs`, as the digest holds it inside quiet hours (due at once). */
function holdRun(channel: string, eventId: string, atMs: number): Promise<void> {
  return quietHours.hold(channel, {
    eventId,
    projectId: project,
    headline: 'Northwind — held',
    createdAt: new Date(atMs).toISOString(),
    heldAtMs: atMs,
    catchUpAfterMs: atMs,
  });
}

async function heldChannels(): Promise<string[]> {
  return (await quietHours.channelsWithHeld()).map((held) => held.channel);
}

/** The held item of the channel as stored, and its size as DynamoDB counts it (names and values in UTF-8). */
async function heldItem(channel: string): Promise<{ item: Record<string, AttributeValue>; bytes: number }> {
  const read = await peers.dynamo.client.send(
    new GetItemCommand({ TableName: TABLE, Key: { pk: { S: `${PREFIXES.held}${channel}` } }, ConsistentRead: true }),
  );
  const item = read.Item ?? {};
  return { item, bytes: itemBytes(item) };
}

function itemBytes(item: Record<string, AttributeValue>): number {
  const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
  // A number is counted by its decimal text (DynamoDB stores at most that), a map by its members plus 3 bytes each.
  const value = (v: AttributeValue): number =>
    v.S !== undefined
      ? utf8(v.S)
      : v.N !== undefined
        ? utf8(v.N) + 1
        : v.M !== undefined
          ? 3 + itemBytes(v.M) + Object.keys(v.M).length
          : 1;
  return Object.entries(item).reduce((sum, [name, v]) => sum + utf8(name) + value(v), 0);
}

describe('quiet hours that leave almost nothing open', () => {
  it('a window of 23 h 59 min stored before the limit still posts its runs, within a sweep after their own window', async () => {
    await subscriptions.subscribe({ projectId: project, projectName: 'Northwind', channel: 'C0WIDE', actor: ANA, nowMs: now });
    // 00:00–23:59 UTC: open one minute a day; `/visibility quiet` refuses it now, a stored one still works.
    await quietHours.setWindow('C0WIDE', { startMinute: 0, endMinute: 23 * 60 + 59, timeZone: 'UTC' }, ANA, now);
    const day = Math.floor(now / 86_400_000) * 86_400_000;
    // Sweeps every 5 minutes from an offset that never lands in 23:59.
    const sweepAt = async (minuteOfDay: number) => {
      now = day + minuteOfDay * 60_000;
      expect((await deliver(sweepMessage)).failed.size).toBe(0);
    };

    now = day + 10 * 3_600_000; // 10:00: quiet
    const run = runEvent();
    expect((await deliver(run)).failed.size).toBe(0);
    expect(observer.countOf('DigestHeld')).toBe(1);
    await sweepAt(10 * 60 + 3);
    await sweepAt(23 * 60 + 58);
    expect(topLevel('C0WIDE')).toHaveLength(0);
    expect(await quietHours.channelsWithHeld()).toEqual([{ channel: 'C0WIDE', dueMs: day + (23 * 60 + 59) * 60_000 }]);

    // 00:03 the next day: quiet again, but the run's own window ended at 23:59.
    await sweepAt(24 * 60 + 3);
    const posted = topLevel('C0WIDE');
    expect(posted).toHaveLength(1);
    expect(JSON.stringify(posted[0]?.blocks)).toContain(`/runs/${String(run.data['run_id'])}|open`);
    expect(await heldChannels()).toEqual([]);

    // A run held at 00:04 waits for that day's 23:59, not for this sweep.
    now = day + (24 * 60 + 4) * 60_000;
    expect((await deliver(runEvent())).failed.size).toBe(0);
    await sweepAt(24 * 60 + 8);
    expect(topLevel('C0WIDE')).toHaveLength(1);
    await sweepAt(48 * 60 + 3);
    expect(topLevel('C0WIDE')).toHaveLength(2);
  });
});

describe('many held runs', () => {
  it('2,000 held runs in one channel: every hold works, the item stays small, the catch-up posts once with the count', async () => {
    const projects = ['p-alpha', 'p-beta', 'p-gamma'];
    // Headlines of ~250 characters (one item of all 2,000 would pass 400 KB), past the stored
    // cut (600 characters) for the last 50, so the item ends at its largest.
    const long = (i: number) => (i >= 1_950 ? 'x'.repeat(700) : 'Share of voice −2 pts · '.repeat(10));
    const start = now;
    let largest = 0;
    for (let i = 0; i < 2_000; i++) {
      const at = start + i * 1_000;
      await quietHours.hold('C0BUSY', {
        eventId: `busy-${i}`,
        projectId: projects[i % 3] ?? '',
        headline: `${projects[i % 3] ?? ''} run ${i} ${long(i)}`,
        link: `https://dash.example/p/x/runs/${i}`,
        createdAt: new Date(at).toISOString(),
        heldAtMs: at,
        catchUpAfterMs: start + 3_600_000,
      });
      if (i % 250 === 249) {
        const held = await heldItem('C0BUSY');
        expect(Object.keys(held.item).filter((name) => name.startsWith('r_')).length).toBeLessThanOrEqual(30);
        largest = Math.max(largest, held.bytes);
      }
    }
    const { item, bytes } = await heldItem('C0BUSY');
    largest = Math.max(largest, bytes);
    // DynamoDB's limit is 400 KB; the item holds 30 runs of at most ~700 bytes each.
    expect(largest).toBeLessThan(40_000);
    expect(Object.keys(item).filter((name) => name.startsWith('r_'))).toHaveLength(30);

    // A real run in the window is still held (the channel is not stuck), and nothing is posted there.
    await subscriptions.subscribe({ projectId: project, projectName: 'Northwind', channel: 'C0BUSY', actor: ANA, nowMs: now });
    await quietHours.setWindow('C0BUSY', NIGHT, ANA, now);
    const day = Math.floor(now / 86_400_000) * 86_400_000;
    now = day + 23 * 3_600_000;
    const last = runEvent();
    expect((await deliver(last)).failed.size).toBe(0);
    expect(observer.countOf('DigestHeld')).toBe(1);
    expect(observer.countOf('DigestHoldFailed')).toBe(0);

    now = day + 31 * 3_600_000 + 60_000; // 07:01
    expect((await deliver(sweepMessage, sweepMessage)).failed.size).toBe(0);
    expect((await deliver(sweepMessage)).failed.size).toBe(0);
    const posted = topLevel('C0BUSY');
    expect(posted).toHaveLength(1);
    const blocks = JSON.stringify(posted[0]?.blocks);
    expect(blocks).toContain('2001 digests were held during quiet hours (22:00–07:00 UTC)');
    // The newest of each project is listed, the rest counted on it.
    for (const newest of [1997, 1998, 1999]) expect(blocks).toContain(`/runs/${newest}|open`);
    expect(blocks).toContain(`/runs/${String(last.data['run_id'])}|open`);
    const counted = [...blocks.matchAll(/and (\d+) earlier of this project/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(counted + 30).toBe(2001);
    expect(await heldChannels()).toEqual([]);
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);
  }, 600_000);
});

describe('holds racing', () => {
  it('six runs held in one channel at once are all kept (each hold retries on the version it read)', async () => {
    await Promise.all(['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => holdRun('C0RACING', id, now)));
    const { item } = await heldItem('C0RACING');
    expect(
      Object.keys(item)
        .filter((name) => name.startsWith('r_'))
        .sort(),
    ).toEqual(['r_r1', 'r_r2', 'r_r3', 'r_r4', 'r_r5', 'r_r6']);
    expect(item['version']).toEqual({ N: '6' });
    expect(await heldChannels()).toEqual(['C0RACING']);
    // One catch-up lists all six.
    now += 60_000;
    const sweepDeps = { quietHours, slack: deps().slack, clock: { now: () => now }, log: observer, metrics: observer };
    expect((await sweepCatchUps(sweepDeps)).posted).toEqual(['C0RACING']);
    expect(JSON.stringify(topLevel('C0RACING')[0]?.blocks)).toContain('6 digests were held');
    expect(await heldChannels()).toEqual([]);
  });
});

describe('a hold that fails', () => {
  it("is that channel's loss alone: counted, and the run is posted in its other channels", async () => {
    for (const channel of ['C0BROKEN', 'C0OPEN'])
      await subscriptions.subscribe({ projectId: project, projectName: 'Northwind', channel, actor: ANA, nowMs: now });
    await quietHours.setWindow('C0BROKEN', NIGHT, ANA, now);
    // A held item the table will not take a hold on (its counter is not a number).
    await peers.dynamo.client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: `${PREFIXES.held}C0BROKEN` }, version: { S: 'not a number' } } }),
    );
    const day = Math.floor(now / 86_400_000) * 86_400_000;
    now = day + 23 * 3_600_000;
    expect((await deliver(runEvent())).failed.size).toBe(0);
    expect(topLevel('#digests')).toHaveLength(1);
    expect(topLevel('C0OPEN')).toHaveLength(1);
    expect(topLevel('C0BROKEN')).toHaveLength(0);
    expect(observer.countOf('DigestHoldFailed')).toBe(1);
    expect(observer.countOf('DigestHeld')).toBe(0);
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);
  });
});

describe('quiet hours after a crash', () => {
  it('a catch-up whose post went out but was not recorded is found in Slack, not posted again', async () => {
    // Slack's ts come from the local server's real clock: the lookup window starts at the catch-up's first claim.
    let t = Date.now();
    await holdRun('C0CRASH', 'e3', t);
    t += 60_000;
    const real = deps().slack;
    // The post reaches Slack, then the worker dies before recording it (its claim is released on the error).
    const dying = {
      ...real,
      post: async (...args: Parameters<typeof real.post>) => {
        await real.post(...args);
        throw new Error('worker died after posting');
      },
    };
    const sweepDeps = { quietHours, clock: { now: () => t }, log: observer, metrics: observer };
    expect((await sweepCatchUps({ ...sweepDeps, slack: dying })).failed).toEqual(['C0CRASH']);
    expect(topLevel('C0CRASH')).toHaveLength(1);

    t += 60_000;
    expect((await sweepCatchUps({ ...sweepDeps, slack: real })).posted).toEqual(['C0CRASH']);
    expect(topLevel('C0CRASH')).toHaveLength(1);
    expect(await heldChannels()).toEqual([]);
  });
});

describe('filters', () => {
  it('a run the filter leaves nothing of posts nothing in that channel, counted; other channels get it', async () => {
    await subscriptions.subscribe({ projectId: project, projectName: 'Northwind', channel: 'C0FILTER', actor: ANA, nowMs: now });
    // A baseline first: a first digest always posts.
    expect((await deliver(runEvent())).failed.size).toBe(0);
    expect(topLevel('C0FILTER')).toHaveLength(1);
    // An engine the project is not measured on, and no change small enough to call.
    const nothing = { engines: ['NoSuchEngine'], minChange: 1000 };
    expect(await subscriptions.setFilter(project, 'C0FILTER', nothing, 'filter', ANA, now)).toMatchObject({ filter: nothing });

    now += 86_400_000;
    expect((await deliver(runEvent())).failed.size).toBe(0);
    const home = topLevel('#digests');
    expect(home).toHaveLength(2);
    // The run had news (the home channel's digest calls changes): the filter took it all.
    expect(home[1]?.text).not.toContain('no significant change');
    expect(topLevel('C0FILTER')).toHaveLength(1);
    expect(observer.countOf('DigestFiltered')).toBe(1);
    expect(observer.countOf('DigestPosted')).toBe(2);

    // `off` removes it: the next run posts there again.
    await subscriptions.setFilter(project, 'C0FILTER', null, 'filter off', ANA, now);
    expect((await subscriptions.forChannel('C0FILTER'))[0]?.filter).toBeUndefined();
    now += 86_400_000;
    expect((await deliver(runEvent())).failed.size).toBe(0);
    expect(topLevel('C0FILTER')).toHaveLength(2);
  });
});

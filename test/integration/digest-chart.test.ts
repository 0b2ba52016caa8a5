/**
 * The trend chart, on real peers (dynalite, the local SQS server, the service simulator, the local
 * Slack server with its files.* methods and its fault injection) and the real PNG renderer: no chart
 * for a first digest; Slack's own line chart in the main message of the next one, the PNG renderer not
 * even loaded; when Slack answers `invalid_blocks` to the chart, the message again with the chart's
 * words, the PNG with its alt text in the thread once per run and channel (also when the record is
 * retried), NativeBlockRefused counted; the thread's engines and gaps as data tables, in words where Slack
 * refuses them; and a PNG that can't be uploaded or drawn leaves one line in
 * the thread and a ChartFailed count while the record succeeds.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { createSlackFileUploader } from '../../shared/adapters/slack-files';
import { loadChartRenderer } from '../../shared/charts/load';
import type { ChartDeps } from '../../shared/digest/chart-step';
import type { TestWiring } from '../support/worker-wiring';
import type { WebhookEvent } from '../../shared/events';
import { LocalSlackServer, type PostedMessage } from '../../local/slack/server';
import { RecordingObserver } from '../support/recording-observer';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { enqueue, invokeDigestBatch } from '../support/sqs-records';

const TABLE = 'bridge-chart';
const TOKEN = 'xoxb-chart';
const HOME = '#digests';
const WEEK_MS = 7 * 24 * 3600 * 1000;

let peers: DigestPeers;
let slack: LocalSlackServer;
let projects: string[];
/** Each test digests its own project: the table is not emptied between tests. */
let project: string;
let testNumber = 0;
let observer: RecordingObserver;
let store: DynamoDigestStore;
let subscriptions: DynamoSubscriptionStore;
let rendererLoads = 0;
let runAt = Date.UTC(2026, 0, 5, 9, 0);

function charts(overrides: Partial<ChartDeps> = {}): ChartDeps {
  return {
    renderer: () => {
      rendererLoads += 1;
      return loadChartRenderer();
    },
    uploader: createSlackFileUploader({ token: TOKEN, slackApiUrl: slack.apiUrl }),
    ...overrides,
  };
}

function deps(chartDeps: ChartDeps | undefined): TestWiring {
  return {
    readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey, sleep: () => Promise.resolve() }),
    slack: createSlackPoster({ token: TOKEN, slackApiUrl: slack.apiUrl, sleep: () => Promise.resolve(), maxAttempts: 1 }),
    store,
    deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
    channels: { defaultChannel: HOME, byProject: {} },
    subscriptions,
    clock: { now: () => runAt },
    log: observer,
    metrics: observer,
    charts: chartDeps,
  };
}

/** The project's next run, a week after the last. */
function weeklyRun(): WebhookEvent {
  const run = peers.sim.advanceRun(project);
  runAt += WEEK_MS;
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(runAt).toISOString(),
    data: { project_id: project, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

async function deliver(chartDeps: ChartDeps | undefined, event: WebhookEvent) {
  await enqueue(peers.sqs, peers.queueUrl, event);
  return invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(chartDeps), observer);
}

/** Invokes until the queue hands out something (a failed record comes back after its 1 s visibility timeout). */
async function redeliver(chartDeps: ChartDeps | undefined) {
  for (;;) {
    const result = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(chartDeps), observer);
    if (result.records.length > 0) return result;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const mains = (channel: string) => slack.messages(channel).filter((m) => !m.thread_ts && !m.files);
const chartsIn = (channel: string): PostedMessage[] => slack.messages(channel).filter((m) => m.files !== undefined);
const linesIn = (channel: string) => slack.messages(channel).filter((m) => m.text?.startsWith('Trend chart unavailable'));
const nativeChart = (m: PostedMessage | undefined) =>
  (m?.blocks ?? []).find((b) => (b as { type?: unknown }).type === 'data_visualization');
const replies = (channel: string) => slack.messages(channel).filter((m) => m.thread_ts !== undefined && !m.files);
const tablesIn = (m: PostedMessage) => (m.blocks ?? []).filter((b) => (b as { type?: unknown }).type === 'data_table');
/** Slack refusing the chart block once in `channel` (a workspace or client without it yet). */
const refuseChart = (channel: string) =>
  slack.injectFault({ method: 'chat.postMessage', channel, times: 1, kind: 'slack_error', error: 'invalid_blocks' });

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'chart', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  slack = await LocalSlackServer.start({ tokens: [TOKEN] });
  projects = peers.sim.projectIds();
  store = new DynamoDigestStore(peers.dynamo.client, { tableName: TABLE, leaseMs: 600_000, retentionSeconds: 86400 });
  subscriptions = new DynamoSubscriptionStore(peers.dynamo.client, TABLE);
});

afterAll(async () => {
  await slack.close();
  await peers.close();
});

beforeEach(async () => {
  observer = new RecordingObserver();
  rendererLoads = 0;
  project = projects[testNumber++ % projects.length]!;
  await peers.reset();
  slack.reset();
  for (const s of await subscriptions.listAll()) await subscriptions.unsubscribe(s.projectId, s.channel);
});

describe('the trend chart', () => {
  it('is left out of a first digest, then drawn by Slack in the next main message; the PNG renderer is not loaded', async () => {
    const baseline = await deliver(charts(), weeklyRun());
    expect(baseline.failed.size).toBe(0);
    expect(nativeChart(mains(HOME)[0])).toBeUndefined();
    expect((await store.getSnapshot(project))?.trend).toHaveLength(1);

    const second = await deliver(charts(), weeklyRun());
    expect(second.failed.size).toBe(0);
    const main = mains(HOME).at(-1);
    expect(nativeChart(main)).toMatchObject({ type: 'data_visualization', chart: { type: 'line' } });
    expect(main?.text).toMatch(/ by engine, .+ \(UTC\): /);
    expect(chartsIn(HOME)).toHaveLength(0);
    expect(rendererLoads).toBe(0);
    expect(slack.calls('files.getUploadURLExternal')).toHaveLength(0);
    expect(observer.countOf('NativeBlockRefused{block=data_visualization}')).toBe(0);
    expect((await store.getSnapshot(project))?.trend).toHaveLength(2);
  });

  it('refused by Slack (invalid_blocks): the message again with the chart in words, the PNG with its alt text in the thread, counted', async () => {
    await deliver(charts(), weeklyRun());
    refuseChart(HOME);
    const run = await deliver(charts(), weeklyRun());
    expect(run.failed.size).toBe(0);
    const main = mains(HOME).at(-1);
    expect(nativeChart(main)).toBeUndefined();
    expect(JSON.stringify(main?.blocks)).toContain('_Trend:_ ');
    const [chart] = chartsIn(HOME);
    expect(chartsIn(HOME)).toHaveLength(1);
    expect(chart?.thread_ts).toBe(main?.ts);
    const file = chart?.files?.[0];
    expect(file?.mimetype).toBe('image/png');
    expect(file?.alt_txt).toMatch(/^Visibility by engine for .+, 2 runs from /);
    // The bytes served are a PNG.
    const png = Buffer.from(await (await fetch(file!.url_private)).arrayBuffer());
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(observer.countOf('NativeBlockRefused{block=data_visualization}')).toBe(1);
    expect(observer.countOf('ChartPosted')).toBe(1);
    expect(observer.countOf('DigestPosted')).toBe(2);
  });

  it('renders the PNG once per run, uploads it only where the chart was refused, and a retry never uploads it twice', async () => {
    await deliver(charts(), weeklyRun());
    await subscriptions.subscribe({ projectId: project, projectName: 'P', channel: 'C0TWO', actor: { userId: 'U1' }, nowMs: runAt });
    slack.reset();
    refuseChart(HOME);
    refuseChart('C0TWO');
    // The subscribed channel's second post (its message again, in words) fails with a 5xx (outcome unknown,
    // the record is retried); the home channel finishes, PNG included.
    slack.injectFault({ method: 'chat.postMessage', channel: 'C0TWO', times: 1, kind: 'server_error' });
    const first = await deliver(charts(), weeklyRun());
    expect(first.failed.size).toBe(1);
    expect(chartsIn(HOME)).toHaveLength(1);
    expect(rendererLoads).toBe(1);

    const retry = await redeliver(charts());
    expect(retry.failed.size).toBe(0);
    expect(chartsIn(HOME)).toHaveLength(1);
    // The retry's post was taken: Slack drew the chart, so no PNG there.
    expect(mains('C0TWO')).toHaveLength(1);
    expect(nativeChart(mains('C0TWO')[0])).toBeDefined();
    expect(chartsIn('C0TWO')).toHaveLength(0);
    expect(slack.calls('files.completeUploadExternal')).toHaveLength(1);
  });

  it('says why in the thread and counts ChartFailed when Slack refuses the upload; the record succeeds', async () => {
    await deliver(charts(), weeklyRun());
    refuseChart(HOME);
    slack.injectFault({ method: 'files.getUploadURLExternal', kind: 'slack_error', error: 'missing_scope' });
    const run = await deliver(charts(), weeklyRun());
    expect(run.failed.size).toBe(0);
    expect(chartsIn(HOME)).toHaveLength(0);
    const lines = linesIn(HOME);
    expect(lines.map((m) => m.text)).toEqual(['Trend chart unavailable: Slack refused the upload (`missing_scope`).']);
    expect(lines[0]?.thread_ts).toBe(mains(HOME).at(-1)?.ts);
    expect(observer.countOf('ChartFailed{reason=upload_refused}')).toBe(1);
    expect(observer.countOf('DigestPosted')).toBe(2); // the baseline and this run
  });

  it('says why when the PNG cannot be drawn', async () => {
    await deliver(charts(), weeklyRun());
    refuseChart(HOME);
    const broken = charts({ renderer: () => Promise.reject(new Error('wasm missing')) });
    const run = await deliver(broken, weeklyRun());
    expect(run.failed.size).toBe(0);
    expect(linesIn(HOME).map((m) => m.text)).toEqual(['Trend chart unavailable: it could not be drawn.']);
    expect(observer.countOf('ChartFailed{reason=render_failed}')).toBe(1);
  });

  it('the thread lists engines and gaps as data tables; refused by Slack, each such reply again in words, counted', async () => {
    await deliver(undefined, weeklyRun());
    await deliver(undefined, weeklyRun());
    expect(replies(HOME).some((m) => tablesIn(m).length > 0)).toBe(true);

    slack.reset();
    slack.injectFault({ method: 'chat.postMessage', channel: HOME, kind: 'refuse_native_blocks' });
    const run = await deliver(undefined, weeklyRun());
    expect(run.failed.size).toBe(0);
    const refused = replies(HOME);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((m) => tablesIn(m).length === 0)).toBe(true);
    // Nothing lost: the engines' lines are in the reply Slack took.
    expect(JSON.stringify(refused.map((m) => m.blocks))).toContain('*AI engines* (');
    const inWords = refused.filter((m) => /\*AI engines\* \(|\*Open gaps\* \(/.test(JSON.stringify(m.blocks))).length;
    expect(inWords).toBeGreaterThan(0);
    expect(observer.countOf('NativeBlockRefused{block=data_table}')).toBe(inWords);
    expect(observer.countOf('NativeBlockRefused{block=data_visualization}')).toBe(1);
  });

  it('with the PNG fallback off: the chart refused leaves its words in the message, and nothing is uploaded', async () => {
    await deliver(undefined, weeklyRun());
    refuseChart(HOME);
    const run = await deliver(undefined, weeklyRun());
    expect(run.failed.size).toBe(0);
    expect(JSON.stringify(mains(HOME).at(-1)?.blocks)).toContain('_Trend:_ ');
    expect(chartsIn(HOME)).toHaveLength(0);
    expect(linesIn(HOME)).toHaveLength(0);
    expect(slack.calls('files.getUploadURLExternal')).toHaveLength(0);
    expect(observer.countOf('NativeBlockRefused{block=data_visualization}')).toBe(1);
  });
});

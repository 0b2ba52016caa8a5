/**
 * Each tenant sees only its own (issue 31, item 3): two connection tenants (X, Y) and the stack's, three
 * Slack teams (A linked to X, B linked to Y, S the stage's own) and a team with no tenant (Z). Random
 * sequences of runs delivered, slash commands, digest button clicks, Home tab opens and weekly sweeps go
 * through the real command service (the Slack function's side) and the real digest worker, over dynalite
 * and three service simulators. After every step: no answer, post or Home tab in a team names a project
 * of a tenant that team does not reach, and no stored item holds a project of another tenant than its
 * key's. fast-check prints the seed and path of a failing sequence. Then one focused test per surface.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { VisibilitySimulator } from '../../local/simulator/server';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoWeeklyStore } from '../../shared/adapters/dynamo-weekly-store';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { actionValueCodec } from '../../shared/buttons/value';
import type { Connection } from '../../shared/connections/model';
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import type { QueuedEvent } from '../../shared/ports';
import { handleButtonAction, type ActionDeps } from '../../shared/slack-app/actions';
import type { HomeView } from '../../shared/slack-app/home/ports';
import { shareValuesFrom } from '../../shared/slack-app/interactions';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';
import type { SlackReply } from '../../shared/slack-app/ports';
import { answerSlashCommand } from '../../shared/slack-app/service';
import { answerHomeAction, type EventDeps } from '../../shared/slack-app/slack-events';
import { teamTenants } from '../../shared/slack-app/tenant-scope';
import { STACK_TENANT, tenantLabel, tenantOfKey, type Tenant } from '../../shared/tenancy';
import type { RecordOutcome } from '../../shared/worker/batch';
import { connectionDigests, type InstallationSlack } from '../../shared/worker/connections';
import type { Installation } from '../../shared/installations/model';
import { DynamoInstallationStore, DynamoRefreshLease } from '../../shared/adapters/dynamo-installation-store';
import { RecordingCommandQueue } from '../support/command-queue';
import { RecordingObserver } from '../support/recording-observer';
import { RecordingSlack } from '../support/recording-slack';
import { processTestBatch, type TestWiring } from '../support/worker-wiring';
import { installationOf } from '../support/installations';

const TABLE = 'tenant-isolation';
const APP = 'A0BRIDGE';
const codec = actionValueCodec(['s'.repeat(40)]);

type Label = 'stack' | 'x' | 'y';
type Team = 'TA' | 'TB' | 'TS' | 'TZ';
/** Which tenants each team reaches: A is linked to X, B to Y, S is the stage's own, Z to nothing. */
const REACHES: Record<Team, Label[]> = { TA: ['x'], TB: ['y'], TS: ['stack'], TZ: [] };
const CHANNELS: Record<Team, string[]> = { TA: ['CA1', 'CA2'], TB: ['CB1', 'CB2'], TS: ['CS1', 'CS2'], TZ: ['CZ1'] };
const TEAMS = Object.keys(REACHES) as Team[];
const LABELS: Label[] = ['stack', 'x', 'y'];

let dynamo: LocalDynamo;
const sims = {} as Record<Label, VisibilitySimulator>;
const apis = {} as Record<Label, ReadApiClient>;
const projects = {} as Record<Label, string[]>;
let connections: DynamoConnectionStore;

function tenantOfLabel(label: Label): Tenant {
  return label === 'stack' ? STACK_TENANT : { kind: 'connection', connectionId: label };
}

const subscriptionsOf = (tenant: Tenant) => new DynamoSubscriptionStore(dynamo.client, TABLE, 'full', tenant);
const digestsOf = (tenant: Tenant) =>
  new DynamoDigestStore(dynamo.client, { tableName: TABLE, leaseMs: 60_000, retentionSeconds: 3600, tenant });
const quietOf = (tenant: Tenant) => new DynamoQuietHoursStore(dynamo.client, TABLE, tenant);
const weeklyOf = (tenant: Tenant) => new DynamoWeeklyStore(dynamo.client, { tableName: TABLE, leaseMs: 60_000, tenant });

const installationsOf = () => new DynamoInstallationStore(dynamo.client, { tableName: TABLE });

function installation(team: Team): Installation {
  return installationOf({ teamId: team, appId: APP, bot: { token: `xoxb-${team}` } });
}

/** The linked teams' installations; every team's posts reach the world's one recording of Slack. */
function installationSlack(slack: RecordingSlack, log: RecordingObserver): InstallationSlack {
  return {
    tokens: {
      store: installationsOf(),
      lease: new DynamoRefreshLease(dynamo.client, { tableName: TABLE, leaseMs: 60_000 }),
      refresher: { refresh: () => Promise.reject(new Error('the tokens here do not expire')) },
      clock: { now: () => Date.now() },
      sleep: () => Promise.resolve(),
      log,
    },
    clientsFor: () => ({ slack, charts: undefined }),
    channelsFor: () => ({ postingAccess: () => Promise.resolve({ canPost: true }) }),
  };
}

function connection(id: Label, team: Team, sim: VisibilitySimulator): Connection {
  return {
    id,
    baseUrl: sim.url,
    secretName: `visibility-bridge/test/connections/${id}`,
    routes: { defaultChannel: CHANNELS[team][0]!, byProject: {} },
    slackTeamIds: [team],
    status: 'active',
    createdAtMs: 0,
  };
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  const seeds: Record<Label, number> = { stack: 7, x: 1, y: 2 };
  for (const label of LABELS) {
    sims[label] = await VisibilitySimulator.start({ apiKey: `key-${label}`, seed: seeds[label] });
    apis[label] = new ReadApiClient({ baseUrl: sims[label].url, apiKey: `key-${label}`, sleep: () => Promise.resolve() });
    projects[label] = sims[label].projectIds();
  }
  connections = new DynamoConnectionStore(dynamo.client, TABLE);
  await connections.add(connection('x', 'TA', sims.x));
  await connections.add(connection('y', 'TB', sims.y));
  // X and Y post with the installations of the teams they are linked to (tokens that do not expire).
  for (const team of ['TA', 'TB'] as const) await installationsOf().save(installation(team));
}, 60_000);

afterAll(async () => {
  await Promise.all([...LABELS.map((label) => sims[label].close()), dynamo.close()]);
});

/** One world: what the teams were answered, what was posted and published, through one set of doubles of Slack itself. */
function world() {
  const observer = new RecordingObserver();
  const slack = new RecordingSlack(() => Date.now());
  const queue = new RecordingCommandQueue();
  /** `typed`: the command's own words, which its answer may quote back (the user's input, not something learnt). */
  const answers: { team: Team; reply: SlackReply; typed?: string | undefined }[] = [];
  const views: { team: Team; view: HomeView }[] = [];
  const teamOfUrl = (url: string) => url.split('/')[3] as Team;
  const typedAt = new Map<string, string>();
  const responder = {
    respond: (url: string, reply: SlackReply) => {
      answers.push({ team: teamOfUrl(url), reply, typed: typedAt.get(url) });
      return Promise.resolve();
    },
  };
  const tenants = teamTenants({ teamIds: ['TS'], enterpriseId: undefined, appId: APP }, connections, (tenant) => ({
    tenant,
    store: subscriptionsOf(tenant),
    snapshots: digestsOf(tenant),
  }));
  const groups = { membersOf: () => Promise.resolve(new Set<string>()) };
  const slackSide: ActionDeps & EventDeps = {
    store: subscriptionsOf(STACK_TENANT),
    clock: { now: () => Date.now() },
    shares: shareValuesFrom(() => Promise.resolve(codec)),
    access: DEFAULT_SLACK_ACCESS_POLICY,
    groups,
    queue,
    responder,
    tenants,
    quietHours: { store: quietOf(STACK_TENANT), defaultTimeZone: 'UTC' },
    postedLedger: undefined,
    installations: undefined,
    replays: { firstSeen: () => Promise.resolve(true) },
    metrics: observer,
    log: observer,
  };
  const wiring: TestWiring = {
    readApi: apis.stack,
    slack,
    store: digestsOf(STACK_TENANT),
    deadLetters: { quarantine: () => Promise.resolve() },
    channels: { defaultChannel: CHANNELS.TS[0]!, byProject: {} },
    clock: { now: () => Date.now() },
    log: observer,
    metrics: observer,
    subscriptions: subscriptionsOf(STACK_TENANT),
    quietHours: quietOf(STACK_TENANT),
    actionValues: () => Promise.resolve(codec),
    responder,
    slackApp: {
      access: DEFAULT_SLACK_ACCESS_POLICY,
      groups,
      channels: { postingAccess: () => Promise.resolve({ canPost: true }) },
      views: {
        publish: (userId, view) => {
          views.push({ team: userId.slice(2) as Team, view });
          return Promise.resolve();
        },
      },
    },
    weekly: {
      store: weeklyOf(STACK_TENANT),
      options: { timeZone: 'UTC', defaultChannel: CHANNELS.TS[0]!, projectChannels: {} },
    },
    connections: connectionDigests(
      connections,
      (c) => Promise.resolve(apis[c.id as Label]),
      (tenant) => ({
        store: digestsOf(tenant),
        subscriptions: subscriptionsOf(tenant),
        quietHours: quietOf(tenant),
        weekly: weeklyOf(tenant),
      }),
      installationSlack(slack, observer),
    ),
  };

  /** The deferred work the Slack side queued, answered by the worker's commands queue. */
  async function drainCommands(): Promise<void> {
    const records = queue.sent.splice(0).map((body) => ({ messageId: randomUUID(), body: JSON.stringify(body) }));
    if (records.length > 0) expectHandled(await processTestBatch(records, wiring, 'commands'));
  }

  return {
    slack,
    answers,
    views,
    async run(label: Label, index: number) {
      const projectId = projects[label][index % projects[label].length]!;
      const run = sims[label].advanceRun(projectId);
      const event = {
        id: randomUUID(),
        type: 'run.completed' as const,
        created_at: new Date().toISOString(),
        data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
      };
      const queued: QueuedEvent = { event, received_at: event.created_at, ...(label === 'stack' ? {} : { connection: label }) };
      expectHandled(await processTestBatch([{ messageId: randomUUID(), body: JSON.stringify(queued) }], wiring));
    },
    async command(team: Team, channel: string, text: string) {
      const responseUrl = `https://hooks.slack.test/${team}/${randomUUID()}`;
      typedAt.set(responseUrl, text);
      const ack = await answerSlashCommand(
        {
          command: '/visibility',
          text,
          channelId: channel,
          userId: `U-${team}`,
          userName: 'someone',
          responseUrl,
          triggerId: 't',
          teamId: team,
        },
        slackSide,
      );
      answers.push({ team, reply: ack.reply, typed: text });
      if (ack.deferred !== undefined) await queue.send(ack.deferred);
      await drainCommands();
    },
    async click(team: Team, channel: string, projectId: string) {
      await handleButtonAction(
        {
          actor: { userId: `U-${team}` },
          responseUrl: `https://hooks.slack.test/${team}/${randomUUID()}`,
          action: { kind: ACTION_IDS.mute7d, projectId, projectName: 'A project', channel },
          messageBlocks: [],
          team: { teamId: team },
        },
        slackSide,
      );
    },
    async home(team: Team) {
      await answerHomeAction({ kind: 'page', userId: `U-${team}`, page: 0, team: { teamId: team } }, slackSide);
      await drainCommands();
    },
    async weekly() {
      const sweep = { kind: QUEUE_MESSAGE_KINDS.weeklySweep, now: true };
      expectHandled(await processTestBatch([{ messageId: randomUUID(), body: JSON.stringify(sweep) }], wiring));
    },
    async catchUp() {
      const sweep = { kind: QUEUE_MESSAGE_KINDS.quietCatchUp };
      expectHandled(await processTestBatch([{ messageId: randomUUID(), body: JSON.stringify(sweep) }], wiring));
    },
  };
}

/** Every record settled (none handed back for a retry, none quarantined): a failure would hide a leak behind a retry. */
function expectHandled(outcomes: readonly RecordOutcome[]): void {
  const unsettled = outcomes.filter((o) => !o.ok || o.result === 'quarantined');
  expect(unsettled).toEqual([]);
}

type World = ReturnType<typeof world>;

/** Project ids of the tenants `team` does not reach. */
function foreignTo(team: Team): string[] {
  return LABELS.filter((label) => !REACHES[team].includes(label)).flatMap((label) => projects[label]);
}

function teamOfChannel(channel: string): Team {
  return TEAMS.find((team) => CHANNELS[team].includes(channel)) ?? 'TZ';
}

function named(value: unknown, ids: readonly string[]): string[] {
  const text = JSON.stringify(value);
  return ids.filter((id) => text.includes(id));
}

/** Every answer, post and Home tab in a team names only its tenants' projects; every stored item holds only its key's tenant's. */
async function checkIsolation(w: World): Promise<void> {
  for (const { team, reply, typed = '' } of w.answers) {
    const learnt = foreignTo(team).filter((id) => !typed.includes(id));
    expect(named(reply, learnt), `answer in ${team}: ${reply.text}`).toEqual([]);
  }
  for (const post of w.slack.posts) {
    const team = teamOfChannel(post.channel);
    expect(named(post, foreignTo(team)), `post in ${post.channel}: ${post.text}`).toEqual([]);
  }
  for (const { team, view } of w.views) expect(named(view, foreignTo(team)), `Home tab in ${team}`).toEqual([]);
  for (const item of await scanAll()) {
    const pk = item['pk']?.S ?? '';
    const owner = tenantLabel(tenantOfKey(pk).tenant) as Label;
    const others = LABELS.filter((label) => label !== owner).flatMap((label) => projects[label]);
    expect(named(item, others), `item ${pk}`).toEqual([]);
  }
}

async function scanAll() {
  const items: Record<string, { S?: string }>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.client.send(new ScanCommand({ TableName: TABLE, ...(start ? { ExclusiveStartKey: start as never } : {}) }));
    items.push(...((page.Items ?? []) as Record<string, { S?: string }>[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

// --- The property --------------------------------------------------------------------------------

const team = fc.constantFrom<Team>(...TEAMS);
const label = fc.constantFrom<Label>(...LABELS);
/** A project named by id, of any tenant (another team's included), or by its name (every simulator has these names). */
type ProjectRef = { label: Label; index: number } | { name: string };
const projectRef: fc.Arbitrary<ProjectRef> = fc.oneof(
  fc.record({ label, index: fc.nat(3) }),
  fc.record({ name: fc.constantFrom('Ledgerly', 'Voltway') }),
);

function refText(ref: ProjectRef): string {
  return 'name' in ref ? ref.name : projects[ref.label][ref.index % projects[ref.label].length]!;
}

type Step =
  | { kind: 'run'; label: Label; index: number }
  | { kind: 'command'; team: Team; channel: number; verb: string; project: ProjectRef }
  | { kind: 'click'; team: Team; channel: number; label: Label; index: number }
  | { kind: 'home'; team: Team }
  | { kind: 'quiet'; team: Team; channel: number; on: boolean }
  | { kind: 'weekly' }
  | { kind: 'catchUp' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('run' as const), label, index: fc.nat(3) }),
  fc.record({
    kind: fc.constant('command' as const),
    team,
    channel: fc.nat(1),
    verb: fc.constantFrom('projects', 'status', 'subscribe', 'unsubscribe', 'list', 'mute'),
    project: projectRef,
  }),
  fc.record({ kind: fc.constant('click' as const), team, channel: fc.nat(1), label, index: fc.nat(3) }),
  fc.record({ kind: fc.constant('home' as const), team }),
  fc.record({ kind: fc.constant('quiet' as const), team, channel: fc.nat(1), on: fc.boolean() }),
  fc.constant({ kind: 'weekly' as const }),
  fc.constant({ kind: 'catchUp' as const }),
);

function describeStep(s: Step): string {
  if (s.kind === 'command') return `${s.team}#${s.channel} /visibility ${s.verb} ${refText(s.project)}`;
  return JSON.stringify(s);
}

async function perform(w: World, s: Step): Promise<void> {
  switch (s.kind) {
    case 'run':
      return w.run(s.label, s.index);
    case 'command': {
      const channel = CHANNELS[s.team][s.channel % CHANNELS[s.team].length]!;
      const args = s.verb === 'projects' || s.verb === 'list' ? '' : ` ${refText(s.project)}${s.verb === 'mute' ? ' 1d' : ''}`;
      return w.command(s.team, channel, `${s.verb}${args}`);
    }
    case 'click': {
      const channel = CHANNELS[s.team][s.channel % CHANNELS[s.team].length]!;
      return w.click(s.team, channel, projects[s.label][s.index % projects[s.label].length]!);
    }
    case 'home':
      return w.home(s.team);
    case 'quiet': {
      // All day quiet: runs to the channel are held (under their tenant) until `quiet off` and a catch-up.
      const channel = CHANNELS[s.team][s.channel % CHANNELS[s.team].length]!;
      return w.command(s.team, channel, s.on ? 'quiet 00:00-23:59 UTC' : 'quiet off');
    }
    case 'weekly':
      return w.weekly();
    case 'catchUp':
      return w.catchUp();
  }
}

// --- One surface at a time -----------------------------------------------------------------------

describe('another tenant’s project is answered as no project at all', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });
  const lastAnswer = () => w.answers[w.answers.length - 1]!.reply.text;

  it('status and subscribe in team A of a project of Y: "no project matches"; of X: answered', async () => {
    await w.command('TA', 'CA2', `status ${projects.y[0]!}`);
    expect(lastAnswer()).toMatch(/^No project matches/);
    await w.command('TA', 'CA2', `subscribe ${projects.y[1]!}`);
    expect(lastAnswer()).toMatch(/^No project matches/);
    expect(await subscriptionsOf({ kind: 'connection', connectionId: 'y' }).forChannel('CA2')).toEqual([]);
    await w.command('TA', 'CA2', `subscribe ${projects.x[1]!}`);
    expect((await subscriptionsOf({ kind: 'connection', connectionId: 'x' }).forChannel('CA2')).map((s) => s.projectId)).toContain(
      projects.x[1],
    );
    // Stored under X's prefix only: the stack's bare items know nothing of it.
    expect(await subscriptionsOf(STACK_TENANT).forChannel('CA2')).toEqual([]);
  }, 60_000);

  it('projects in team A lists X’s projects only; team Z (no tenant) lists none', async () => {
    await w.command('TA', 'CA1', 'projects');
    const listed = JSON.stringify(w.answers[w.answers.length - 1]!.reply);
    for (const id of projects.x) expect(listed).toContain(id);
    expect(named(listed, foreignTo('TA'))).toEqual([]);
    await w.command('TZ', 'CZ1', 'projects');
    expect(named(w.answers[w.answers.length - 1]!.reply, [...projects.x, ...projects.y, ...projects.stack])).toEqual([]);
  }, 60_000);

  it('unsubscribe and list in team B do not see X’s subscription of a shared channel id', async () => {
    await w.command('TA', 'CA1', `subscribe ${projects.x[2]!}`);
    // The same channel id seen from team B (as a Slack Connect channel would be): X's subscription is not B's.
    await w.command('TB', 'CA1', 'list');
    expect(named(w.answers[w.answers.length - 1]!.reply, projects.x)).toEqual([]);
    await w.command('TB', 'CA1', `unsubscribe ${projects.x[2]!}`);
    expect(lastAnswer()).not.toMatch(/unsubscribed/);
    expect((await subscriptionsOf({ kind: 'connection', connectionId: 'x' }).forChannel('CA1')).map((s) => s.projectId)).toContain(
      projects.x[2],
    );
  }, 60_000);

  it('a digest button of another tenant’s project changes nothing and says no project matches', async () => {
    await w.click('TA', 'CA9', projects.y[3]!);
    expect(w.answers[w.answers.length - 1]!.reply.text).toMatch(/^No project matches/);
    for (const label of LABELS) expect(await subscriptionsOf(tenantOfLabel(label)).forChannel('CA9')).toEqual([]);
  }, 60_000);

  it('a run of X is digested under X’s keys and posted to X’s channel; the Home tab in A shows X’s projects and routes only', async () => {
    await w.run('x', 0);
    const items = (await scanAll()).map((item) => item['pk']?.S ?? '');
    expect(items.some((pk) => pk === `t#x#snapshot#${projects.x[0]!}`)).toBe(true);
    expect(items.some((pk) => pk === `snapshot#${projects.x[0]!}`)).toBe(false);
    expect(w.slack.posts.map((p) => p.channel)).toContain('CA1');
    await w.home('TA');
    const view = JSON.stringify(w.views[w.views.length - 1]!.view);
    expect(view).toContain(projects.x[0]);
    expect(named(view, foreignTo('TA'))).toEqual([]);
    // X's project is routed by X's routes (its default channel), never the stack's.
    expect(view).toContain('CA1');
    expect(view).not.toContain('CS1');
  }, 60_000);

  it('the catch-up posts X’s held digests in X’s channel, from X’s items only', async () => {
    const x = quietOf({ kind: 'connection', connectionId: 'x' });
    const projectId = projects.x[1]!;
    const now = Date.now();
    // As the digest holds a run of X in a quiet channel: under X's prefix, never the stack's.
    await x.hold('CA2', {
      eventId: randomUUID(),
      projectId,
      headline: `held ${projectId}`,
      createdAt: new Date(now).toISOString(),
      heldAtMs: now,
      catchUpAfterMs: now - 1,
    });
    expect((await scanAll()).some((item) => item['pk']?.S === 't#x#held#CA2')).toBe(true);
    expect((await quietOf(STACK_TENANT).channelsWithHeld()).map((h) => h.channel)).not.toContain('CA2');
    await w.catchUp();
    const caughtUp = w.slack.posts.filter((p) => p.channel === 'CA2');
    expect(JSON.stringify(caughtUp)).toContain(`held ${projectId}`);
    expect(named(caughtUp, foreignTo('TA'))).toEqual([]);
    expect((await x.channelsWithHeld()).map((h) => h.channel)).not.toContain('CA2');
  }, 60_000);

  it('the weekly sweep posts each tenant’s report in its own channels, under its own claims', async () => {
    await w.weekly();
    const byChannel = new Map(w.slack.posts.filter((p) => p.threadTs === undefined).map((p) => [p.channel, p]));
    expect([...byChannel.keys()].sort()).toEqual(expect.arrayContaining(['CA1', 'CB1', 'CS1']));
    expect(named(byChannel.get('CA1'), foreignTo('TA'))).toEqual([]);
    const keys = (await scanAll()).map((item) => item['pk']?.S ?? '');
    expect(keys.some((pk) => pk.startsWith('t#x#weekly#CA1#'))).toBe(true);
    expect(keys.some((pk) => pk.startsWith('weekly#CA1#'))).toBe(false);
  }, 60_000);
});

describe('two tenants and the stack in three Slack teams', () => {
  it('no answer, post, Home tab or stored item mixes tenants, whatever the sequence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const w = world();
        for (const [i, s] of steps.entries()) {
          await perform(w, s);
          try {
            await checkIsolation(w);
          } catch (error) {
            throw new Error(`after step ${i + 1} (${describeStep(s)}): ${error instanceof Error ? error.message : String(error)}`, {
              cause: error,
            });
          }
        }
      }),
      { numRuns: 12, endOnFailure: true },
    );
  }, 600_000);
});

/**
 * `/visibility filter` and `/visibility quiet` through the command service over dynalite: stored with
 * the subscription / per channel, announced in the channel, recorded in the channel's history, shown by
 * `list`; bad input answered with what to fix; changes refused to whom the policy refuses them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { enginesFromSnapshots } from '../../shared/slack-app/channel-settings';
import { answerSlashCommand } from '../../shared/slack-app/service';
import type { SlashCommandRequest } from '../../shared/slack-app/commands';
import type { InlineDeps, SlackReply } from '../../shared/slack-app/ports';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';
import { findUnescapedMarkup } from '../../shared/slack-text';
import { RecordingObserver } from '../support/recording-observer';

const TABLE = 'slack-channel-settings';
const NOW = Date.parse('2026-11-24T23:00:00Z');

let dynamo: LocalDynamo;
let store: DynamoSubscriptionStore;
let quiet: DynamoQuietHoursStore;
let observer: RecordingObserver;
let deps: InlineDeps;
let channel: string;
let counter = 0;

function request(text: string, userId = 'U0ANA'): SlashCommandRequest {
  return {
    command: '/visibility',
    text,
    channelId: channel,
    userId,
    userName: 'ana',
    responseUrl: 'https://hooks.slack.com/x',
    triggerId: 't',
    teamId: 'T1',
  };
}

async function say(text: string, userId?: string): Promise<SlackReply> {
  return (await answerSlashCommand(request(text, userId), deps)).reply;
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  store = new DynamoSubscriptionStore(dynamo.client, TABLE);
  quiet = new DynamoQuietHoursStore(dynamo.client, TABLE);
});

afterAll(async () => {
  await dynamo.close();
});

beforeEach(async () => {
  channel = `C0SET${++counter}`;
  observer = new RecordingObserver();
  deps = {
    store,
    clock: { now: () => NOW },
    access: DEFAULT_SLACK_ACCESS_POLICY,
    groups: { membersOf: () => Promise.resolve(new Set<string>()) },
    shares: { encode: () => Promise.resolve(undefined) },
    quietHours: { store: quiet, defaultTimeZone: 'Europe/Berlin' },
    metrics: observer,
    log: observer,
  };
  await store.subscribe({ projectId: 'p-north', projectName: 'Northwind', channel, actor: { userId: 'U0ANA' }, nowMs: NOW });
});

describe('/visibility filter', () => {
  it('stores the filter with the subscription, announces it, records it, and list shows it; off removes it', async () => {
    const set = await say('filter northwind engines=ChatGPT,Claude alerts>=warning min-change=2');
    expect(set.response_type).toBe('in_channel');
    expect(set.text).toContain('<@U0ANA> filtered *Northwind* here: engines ChatGPT, Claude · alerts ≥ warning · min-change 2');
    const [subscription] = await store.forChannel(channel);
    expect(subscription?.filter).toEqual({ engines: ['ChatGPT', 'Claude'], minAlertLevel: 'warning', minChange: 2 });
    expect(subscription?.lastChange).toBe('filter engines ChatGPT, Claude · alerts ≥ warning · min-change 2');
    expect((await store.recentChanges(channel))[0]).toMatchObject({ who: 'U0ANA', projectId: 'p-north' });

    const list = await say('list');
    expect(list.text).toContain('filter: engines ChatGPT, Claude · alerts ≥ warning · min-change 2');

    const off = await say('filter Northwind off');
    expect(off.text).toContain('removed the filter of *Northwind*');
    expect((await store.forChannel(channel))[0]?.filter).toBeUndefined();
    expect((await say('list')).text).not.toContain('filter:');
  });

  it('answers bad input with what to fix, and an unknown project with the channel’s subscriptions', async () => {
    const bad = await say('filter Northwind min-change=lots');
    expect(bad.response_type).toBe('ephemeral');
    expect(bad.text).toContain('min-change=');
    expect(bad.text).toContain('filter <project>');
    const unknown = await say('filter Southwind alerts>=error');
    expect(unknown.response_type).toBe('ephemeral');
    expect((await store.forChannel(channel))[0]?.filter).toBeUndefined();
  });

  it('an engine name with markup is stored as typed and shown sanitized', async () => {
    const set = await say('filter Northwind engines=<!channel>,*Bold*');
    expect(findUnescapedMarkup(set.text.replace(/<@U0ANA>/g, ''))).toBeNull();
    expect(set.text).not.toContain('<!channel>');
  });

  it('is a change: a user the policy does not allow is refused and nothing is stored', async () => {
    deps = { ...deps, access: { changes: { kind: 'users', userIds: ['U0BOSS'] }, changeChannels: {} } };
    const refused = await say('filter Northwind alerts>=critical');
    expect(refused.response_type).toBe('ephemeral');
    expect(observer.countOf('SlackCommandRefused')).toBe(1);
    expect((await store.forChannel(channel))[0]?.filter).toBeUndefined();
  });
});

describe("/visibility filter engines= against the project's engines", () => {
  let snapshots: DynamoDigestStore;
  beforeAll(async () => {
    snapshots = new DynamoDigestStore(dynamo.client, { tableName: TABLE, leaseMs: 60_000, retentionSeconds: 3600 });
    await store.subscribe({ projectId: 'p-ridge', projectName: 'Ridgeway', channel: 'C0RIDGE', actor: { userId: 'U0ANA' }, nowMs: NOW });
    await snapshots.putSnapshot({
      projectId: 'p-ridge',
      lastCreatedAt: new Date(NOW).toISOString(),
      lastRunId: 'r1',
      metrics: {},
      gaps: [],
      engines: { ChatGPT: 41, Claude: 38, Gemini: 22 },
    });
  });

  beforeEach(() => {
    deps = { ...deps, engines: enginesFromSnapshots(snapshots) };
  });

  it('refuses a name the project has no engine for, with the closest one, storing nothing', async () => {
    channel = 'C0RIDGE';
    const typo = await say('filter Ridgeway engines=ChatGTP');
    expect(typo.response_type).toBe('ephemeral');
    expect(typo.text).toContain('No engine named "ChatGTP" in *Ridgeway* — did you mean ChatGPT?');
    expect(typo.text).toContain('Its engines: ChatGPT, Claude, Gemini.');
    // One good name does not carry a bad one: the bad one would still hear nothing.
    expect((await say('filter Ridgeway engines=Claude,Perplexity')).text).toContain('No engine named "Perplexity"');
    expect((await store.forChannel('C0RIDGE'))[0]?.filter).toBeUndefined();
    // Names compare as the digest compares them (case, spaces and punctuation aside).
    expect((await say('filter Ridgeway engines=chat-gpt,CLAUDE')).response_type).toBe('in_channel');
    expect((await store.forChannel('C0RIDGE'))[0]?.filter).toEqual({ engines: ['chat-gpt', 'CLAUDE'] });
  });

  it('shows a hostile name sanitized in the refusal', async () => {
    channel = 'C0RIDGE';
    const text = (await say('filter Ridgeway engines=<!channel>\u202Eevil')).text;
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('\u202E');
  });

  it('accepts names it cannot check yet (no run stored) and says so', async () => {
    const set = await say('filter Northwind engines=ChatGPT');
    expect(set.response_type).toBe('in_channel');
    expect(set.text).toContain('could not be checked');
  });
});

describe('/visibility quiet', () => {
  it('sets the window in the stage zone by default, says it is quiet now, and list shows it; off ends it', async () => {
    const set = await say('quiet 22:00-07:00');
    expect(set.response_type).toBe('in_channel');
    // 23:00Z is 00:00 in Berlin: inside the window, which ends at 07:00 Berlin = 06:00Z.
    expect(set.text).toContain('22:00–07:00 Europe/Berlin');
    expect(set.text).toContain('now quiet until <!date^1795586400^');
    expect((await quiet.windowsOf([channel])).get(channel)?.window).toEqual({
      startMinute: 1320,
      endMinute: 420,
      timeZone: 'Europe/Berlin',
    });
    expect((await store.recentChanges(channel))[0]).toMatchObject({
      what: 'set to 22:00–07:00 Europe/Berlin',
      projectId: '*',
      projectName: 'quiet hours',
    });

    const list = await say('list');
    expect(list.text).toContain('*Quiet hours* 22:00–07:00 Europe/Berlin — quiet now, digests are held');

    const other = await say('quiet 12:00-13:00 America/New_York');
    // The sanitizer shows `_` as a look-alike (never a style marker).
    expect(other.text).toContain('12:00–13:00 America/New\u02CDYork');
    expect(other.text).not.toContain('now quiet');

    await say('quiet off');
    expect((await quiet.windowsOf([channel])).size).toBe(0);
    expect((await say('list')).text).not.toContain('Quiet hours');
  });

  it('bad input says what to fix; without the store wired the verb says so', async () => {
    expect((await say('quiet 25:00-07:00')).text).toContain('not a window');
    expect((await say('quiet 22:00-07:00 Nowhere/Land')).text).toContain('not a time zone');
    deps = { ...deps, quietHours: undefined };
    expect((await say('quiet 22:00-07:00')).text).toContain("aren't set up");
  });
});

describe('channel-wide verbs and changeChannels', () => {
  /** Northwind (subscribed here) may be changed only in C0OPS: quiet hours or a weekly change here would change its delivery here. */
  function fenced(): InlineDeps {
    return { ...deps, access: { changes: { kind: 'everyone' }, changeChannels: { 'p-north': ['C0OPS'] } } };
  }

  it('refuses `quiet` in a channel whose subscribed project may be changed only elsewhere', async () => {
    deps = fenced();
    const refused = await say('quiet 22:00-07:00');
    expect(refused.response_type).toBe('ephemeral');
    expect(refused.text).toContain('*Northwind*');
    expect((await quiet.windowsOf([channel])).size).toBe(0);
    expect(observer.countOf('SlackCommandRefused')).toBe(1);
  });

  it('refuses `weekly off` there too, storing nothing', async () => {
    const settings = new Map<string, unknown>();
    const weekly = {
      store: {
        settings: () => Promise.resolve(new Map()),
        putSetting: (c: string, s: unknown) => Promise.resolve(void settings.set(c, s)),
      },
      timeZone: 'UTC',
    };
    deps = { ...fenced(), weekly };
    const refused = await say('weekly off');
    expect(refused.response_type).toBe('ephemeral');
    expect(refused.text).toContain('*Northwind*');
    expect(settings.size).toBe(0);
    // In a channel that lists it, both are changes like any other.
    channel = 'C0OPS';
    await store.subscribe({ projectId: 'p-north', projectName: 'Northwind', channel, actor: { userId: 'U0ANA' }, nowMs: NOW });
    expect((await say('weekly off')).response_type).toBe('in_channel');
    expect((await say('quiet 22:00-07:00')).response_type).toBe('in_channel');
  });
});

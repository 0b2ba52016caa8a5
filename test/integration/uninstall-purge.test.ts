/**
 * The uninstall purge (shared/installations/uninstall.ts) against the DynamoDB TeamData on dynalite
 * (shared/adapters/dynamo-team-data.ts): whatever the order of app_uninstalled and tokens_revoked, and
 * however often either comes, the team's installation, subscriptions, audit, quiet hours, held digests
 * and weekly schedules are gone, ops hears it once, and the other workspace keeps everything. A channel
 * set up before teams were noted is not purged.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoTeamData } from '../../shared/adapters/dynamo-team-data';
import { DynamoWeeklyStore } from '../../shared/adapters/dynamo-weekly-store';
import { onAppUninstalled, onTokensRevoked, type UninstallDeps } from '../../shared/installations/uninstall';
import { RecordingObserver } from '../support/recording-observer';
import { installationOf } from '../support/installations';

const TABLE = 'uninstall-purge-test';
const NOW = Date.parse('2026-03-02T09:00:00Z');
const ACTOR = { userId: 'U1' };

let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
});

afterAll(async () => {
  await dynamo.close();
});

function stores() {
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, TABLE, 'full');
  return {
    subscriptions,
    quiet: new DynamoQuietHoursStore(dynamo.client, TABLE),
    weekly: new DynamoWeeklyStore(dynamo.client, { tableName: TABLE, leaseMs: 0 }),
    installations: new DynamoInstallationStore(dynamo.client, { tableName: TABLE }),
    teams: new DynamoTeamData(dynamo.client, TABLE, () => subscriptions),
  };
}

/** Fresh ids per run: runs share the table. Channel ids are upper-case letters and digits. */
function ids() {
  const tag = randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase();
  return { gone: `T0GONE${tag}`, stays: `T0STAYS${tag}`, goneChannels: [`C1${tag}`, `C2${tag}`], staysChannel: `C9${tag}` };
}

/** What /visibility leaves in a channel: a subscription, quiet hours with a held digest, a weekly schedule; its team noted. */
async function setUp(s: ReturnType<typeof stores>, team: string | undefined, channel: string): Promise<void> {
  if (team !== undefined) await s.teams.note(team, channel);
  await s.subscriptions.subscribe({ projectId: `p-${channel}`, projectName: 'Acme', channel, actor: ACTOR, nowMs: NOW });
  await s.quiet.setWindow(channel, { startMinute: 0, endMinute: 60, timeZone: 'UTC' }, ACTOR, NOW);
  await s.quiet.hold(channel, {
    eventId: `evt-${channel}`,
    projectId: `p-${channel}`,
    headline: 'Acme',
    createdAt: '2026-03-02T08:00:00Z',
    heldAtMs: NOW,
    catchUpAfterMs: NOW + 3600_000,
  });
  await s.weekly.putSetting(channel, { enabled: true, changedBy: 'U1', changedAtMs: NOW });
}

async function kept(s: ReturnType<typeof stores>, channel: string) {
  const held = await s.quiet.channelsWithHeld();
  return {
    subscriptions: (await s.subscriptions.forChannel(channel)).length,
    quiet: (await s.quiet.windowsOf([channel])).size,
    held: held.some((h) => h.channel === channel),
    weekly: (await s.weekly.settings()).has(channel),
  };
}

const ALL = { subscriptions: 1, quiet: 1, held: true, weekly: true };
const NONE = { subscriptions: 0, quiet: 0, held: false, weekly: false };

async function installed(s: ReturnType<typeof stores>, teamId: string): Promise<void> {
  await s.installations.save(installationOf({ teamId, installedAtMs: NOW }));
}

type Event = 'app_uninstalled' | 'tokens_revoked' | 'tokens_revoked_user_only';

async function deliver(event: Event, team: string, deps: UninstallDeps): Promise<void> {
  if (event === 'app_uninstalled') await onAppUninstalled({ teamId: team }, deps);
  else await onTokensRevoked({ teamId: team }, event === 'tokens_revoked' ? { bot: ['U0BOT'] } : { oauth: ['U1'] }, deps);
}

describe('uninstall purge on DynamoDB', () => {
  it('purges the team once, whatever the order and repeats; the other workspace keeps everything', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray<Event>(['app_uninstalled', 'tokens_revoked', 'tokens_revoked_user_only'], { minLength: 3 }),
        fc.array(fc.constantFrom<Event>('app_uninstalled', 'tokens_revoked', 'tokens_revoked_user_only'), { maxLength: 2 }),
        async (order, repeats) => {
          const s = stores();
          const { gone, stays, goneChannels, staysChannel } = ids();
          for (const channel of goneChannels) await setUp(s, gone, channel);
          await setUp(s, stays, staysChannel);
          await installed(s, gone);
          await installed(s, stays);
          const log = new RecordingObserver();
          const deps: UninstallDeps = { store: s.installations, teamData: s.teams, log };
          for (const event of [...order, ...repeats]) await deliver(event, gone, deps);
          expect(await s.installations.get(gone)).toBeUndefined();
          for (const channel of goneChannels) expect(await kept(s, channel)).toEqual(NONE);
          expect(await s.teams.purge(gone)).toEqual([]);
          expect(log.entries.filter((e) => e.message.startsWith('Slack app removed'))).toHaveLength(1);
          expect(log.entries.find((e) => e.message.startsWith('Slack app removed'))?.fields['channelsPurged']).toBe(2);
          expect(await s.installations.get(stays)).toBeDefined();
          expect(await kept(s, staysChannel)).toEqual(ALL);
        },
      ),
      { numRuns: 8 },
    );
  }, 300_000);

  it('finishes a purge a repeat of the event runs again, and leaves a channel set up before teams were noted', async () => {
    const s = stores();
    const { gone, goneChannels, staysChannel: older } = ids();
    for (const channel of goneChannels) await setUp(s, gone, channel);
    await setUp(s, undefined, older);
    await installed(s, gone);
    // A first purge done before the installation was removed (the step after it failed): the repeat finds nothing left.
    expect((await s.teams.purge(gone)).sort()).toEqual([...goneChannels].sort());
    const log = new RecordingObserver();
    expect(await onAppUninstalled({ teamId: gone }, { store: s.installations, teamData: s.teams, log })).toBe('purged');
    for (const channel of goneChannels) expect(await kept(s, channel)).toEqual(NONE);
    expect(await kept(s, older)).toEqual(ALL);
  }, 120_000);
});

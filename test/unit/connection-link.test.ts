/**
 * Connections linked to Slack installations: the linked ids and the posting rule, the CLI's refusal of a
 * bad `--slack-team`, the watchdog's notice with the connection's own bot, and the workspace gate of a
 * distributed stage (installed teams, org-wide installs, its per-container cache), and `subscribe`'s
 * channel check with the token the connection posts with.
 */
import { describe, expect, it } from 'vitest';
import { bufferIo } from '../../cli/io';
import { run } from '../../cli/main';
import {
  installationRefOf,
  postingTeamOf,
  slackTeamIdProblem,
  withTeamsLinked,
  withTeamsUnlinked,
  type Connection,
} from '../../shared/connections/model';
import type { ConnectionRecord, ConnectionStore } from '../../shared/connections/ports';
import { watchConnections } from '../../shared/connections/watchdog';
import { DIGEST_METRICS } from '../../shared/contracts';
import { NeedsOperatorFix } from '../../shared/errors';
import type { Installation } from '../../shared/installations/model';
import {
  gateReason,
  INSTALLED_TTL_MS,
  InstalledTeamsCache,
  type InstalledTeams,
  type RequestOrigin,
  type WorkspaceAllowList,
} from '../../shared/slack-app/workspace-gate';
import type { ChannelAccess } from '../../shared/slack-app/ports';
import { connectionChannels, type InstallationSlack } from '../../shared/worker/connections';
import { installationOf, MemoryInstallationStore } from '../support/installations';
import { RecordingObserver } from '../support/recording-observer';
import { RecordingSlack } from '../support/recording-slack';

function connection(slackTeamIds: string[], defaultChannel = 'C0ACME'): Connection {
  return {
    id: 'acme',
    baseUrl: 'https://x',
    secretName: 's',
    routes: { defaultChannel, byProject: {} },
    slackTeamIds,
    status: 'active',
    createdAtMs: 0,
  };
}

describe('linked installations', () => {
  it('takes workspace ids (T…) and org ids (E…), nothing else', () => {
    for (const id of ['T0123ABCD', 'E0ORG1']) expect(slackTeamIdProblem(id), id).toBeUndefined();
    for (const id of ['', 't0123abcd', 'C0123ABCD', 'A0APP', 'U0USER', 'T', 'T0 X', 'T0123-AB'])
      expect(slackTeamIdProblem(id), id).toMatch(/workspace id \(T…/);
  });

  it("names the workspace's own installation, or the org's for an org id", () => {
    expect(installationRefOf('T0AAA')).toEqual({ teamId: 'T0AAA' });
    expect(installationRefOf('E0ORG')).toEqual({ enterpriseId: 'E0ORG', isEnterpriseInstall: true });
  });

  it('posts with the first linked; linking keeps the order and each once, unlinking removes only those named', () => {
    expect(postingTeamOf(connection([]))).toBeUndefined();
    expect(postingTeamOf(connection(['T0BBB', 'T0AAA']))).toBe('T0BBB');
    expect(withTeamsLinked(['T0BBB'], ['T0AAA', 'T0BBB', 'T0AAA'])).toEqual(['T0BBB', 'T0AAA']);
    expect(withTeamsUnlinked(['T0BBB', 'T0AAA'], ['T0BBB', 'T0NONE'])).toEqual(['T0AAA']);
  });
});

describe('bridge connections: --slack-team', () => {
  async function exit(args: string[]): Promise<{ code: number; stderr: string }> {
    const io = bufferIo({ stdinText: '' });
    // No stack is reached: a bad id is refused before anything is read.
    const code = await run([...args, '--local', '/nonexistent/ready.json'], io);
    return { code, stderr: io.stderr.text() };
  }

  it('refuses a malformed id with exit 2, naming the flag and the shape', async () => {
    for (const args of [
      ['connections', 'link', 'acme', '--slack-team', 'C0CHANNEL'],
      ['connections', 'unlink', 'acme', '--slack-team', 't0lower'],
      ['connections', 'add', 'acme', '--base-url', 'https://x', '--channel', 'C0X', '--slack-team', 'T0OK', '--slack-team', 'bogus'],
    ]) {
      const result = await exit(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(/--slack-team takes a Slack workspace id \(T…/);
    }
  });

  it('refuses link and unlink without a team, and without a connection id', async () => {
    expect((await exit(['connections', 'link', 'acme'])).stderr).toMatch(/--slack-team is required/);
    expect((await exit(['connections', 'unlink', 'acme'])).code).toBe(2);
    expect((await exit(['connections', 'link', '--slack-team', 'T0AAA'])).code).toBe(2);
  });
});

describe("subscribe's channel check of a linked connection", () => {
  const never = () => Promise.reject(new Error('a token that does not expire needs no lease nor refresh'));
  /** The installations of `teams` (each its token `xoxb-<team>`); `checked` gets the token of each check made. */
  async function installed(teams: string[], checked: string[]): Promise<InstallationSlack> {
    const store = new MemoryInstallationStore();
    for (const teamId of teams) await store.save(installationOf({ teamId, bot: { token: `xoxb-${teamId}` } }));
    return {
      tokens: {
        store,
        lease: { take: never, release: never },
        refresher: { refresh: never },
        clock: { now: () => 0 },
        sleep: () => Promise.resolve(),
        log: new RecordingObserver(),
      },
      clientsFor: () => {
        throw new Error('nothing is posted by a channel check');
      },
      channelsFor: (_id, token) => ({
        postingAccess: () => {
          checked.push(token);
          return Promise.resolve({ canPost: true });
        },
      }),
    };
  }
  const stack: ChannelAccess = { postingAccess: () => Promise.resolve({ canPost: true }) };

  it("asks with the first linked installation's token, and the stack's check when the connection is not linked", async () => {
    const checked: string[] = [];
    const installations = await installed(['T0AAA', 'T0BBB'], checked);
    await (await connectionChannels(connection(['T0BBB', 'T0AAA']), installations, stack)).postingAccess('C1');
    expect(checked).toEqual(['xoxb-T0BBB']);
    expect(await connectionChannels(connection([]), installations, stack)).toBe(stack);
  });

  it('checks nothing when that installation is gone: an operator fix naming the connection and the team', async () => {
    const checked: string[] = [];
    const gone = connectionChannels(connection(['T0GONE']), await installed(['T0AAA'], checked), stack);
    await expect(gone).rejects.toBeInstanceOf(NeedsOperatorFix);
    await expect(gone).rejects.toThrow('connection acme posts with the Slack installation T0GONE, which is gone');
    expect(checked).toEqual([]);
  });
});

describe("the watchdog's notice in a linked connection's channel", () => {
  const HOUR = 3_600_000;
  function deps(linked: Connection, posterOf: (c: Connection) => Promise<RecordingSlack | undefined>) {
    const record: ConnectionRecord = { connection: linked, cadence: { runTimesMs: [0, HOUR, 2 * HOUR], silenceToldAfterMs: undefined } };
    const store: ConnectionStore = {
      get: () => Promise.resolve(record),
      list: () => Promise.resolve([record]),
      add: () => Promise.resolve('added'),
      markRemoved: () => Promise.resolve(true),
      setSlackTeams: () => Promise.resolve(true),
      noteRun: () => Promise.resolve(),
      markSilenceTold: () => Promise.resolve(true),
    };
    const observer = new RecordingObserver();
    const stack = new RecordingSlack(() => 10 * HOUR);
    return {
      stack,
      observer,
      watch: () =>
        watchConnections({
          store,
          slack: stack,
          posterOf,
          opsChannel: 'C0OPS',
          clock: { now: () => 10 * HOUR },
          log: observer,
          metrics: observer,
        }),
    };
  }

  it("posts in the connection's channel with its installation's bot, and in ops with the stack's", async () => {
    const own = new RecordingSlack(() => 10 * HOUR);
    const { stack, watch } = deps(connection(['T0BBB']), () => Promise.resolve(own));
    await watch();
    expect(own.posts.map((p) => p.channel)).toEqual(['C0ACME']);
    expect(stack.posts.map((p) => p.channel)).toEqual(['C0OPS']);
  });

  it("tells ops only, and counts it, when the connection's installation is gone", async () => {
    const { stack, observer, watch } = deps(connection(['T0GONE']), () => Promise.resolve(undefined));
    await watch();
    expect(stack.posts.map((p) => p.channel)).toEqual(['C0OPS']);
    expect(observer.countOf(DIGEST_METRICS.connectionNotInstalled)).toBe(1);
  });

  it("posts once when an unlinked connection's channel is the ops channel", async () => {
    const unlinked: { poster?: RecordingSlack } = {};
    const { stack, watch } = deps(connection([], 'C0OPS'), () => Promise.resolve(unlinked.poster));
    unlinked.poster = stack;
    await watch();
    expect(stack.posts.map((p) => p.channel)).toEqual(['C0OPS']);
  });
});

describe('the workspace gate of a distributed stage', () => {
  const allow: WorkspaceAllowList = { teamIds: ['T0STACK'], enterpriseId: undefined, appId: 'A0BRIDGE' };
  const installed = (...ids: string[]): InstalledTeams => ({ isInstalled: (id) => Promise.resolve(ids.includes(id)) });
  const origin = (teamIds: string[], extra: Partial<RequestOrigin> = {}): RequestOrigin => ({
    teamIds,
    enterpriseId: undefined,
    appId: 'A0BRIDGE',
    ...extra,
  });

  it('serves the listed teams and the installed ones; refuses the rest as foreign teams', async () => {
    const teams = installed('T0BBB', 'T0CCC');
    expect(await gateReason(origin(['T0STACK']), allow, teams)).toBeNull();
    expect(await gateReason(origin(['T0BBB']), allow, teams)).toBeNull();
    // A click in B's channel by a member of C (both installed), or of the stack's own workspace.
    expect(await gateReason(origin(['T0BBB', 'T0CCC']), allow, teams)).toBeNull();
    expect(await gateReason(origin(['T0BBB', 'T0STACK']), allow, teams)).toBeNull();
    expect(await gateReason(origin(['T0NONE']), allow, teams)).toBe('team');
    expect(await gateReason(origin(['T0BBB', 'T0NONE']), allow, teams)).toBe('team');
    expect(await gateReason(origin([]), allow, teams)).toBe('team');
  });

  it('serves a workspace of an org installed org-wide, but not a click naming a second team', async () => {
    const org = installed('E0ORG');
    expect(await gateReason(origin(['T0INORG'], { enterpriseId: 'E0ORG' }), allow, org)).toBeNull();
    expect(await gateReason(origin(['T0INORG', 'T0GUEST'], { enterpriseId: 'E0ORG' }), allow, org)).toBe('team');
    expect(await gateReason(origin(['T0INORG'], { enterpriseId: 'E0OTHER' }), allow, org)).toBe('team');
  });

  it("refuses another app's request however installed, and serves nobody while the stage names no app", async () => {
    const teams = installed('T0BBB');
    expect(await gateReason(origin(['T0BBB'], { appId: 'A0OTHER' }), allow, teams)).toBe('app');
    expect(await gateReason(origin(['T0BBB']), { ...allow, appId: undefined }, teams)).toBe('not_configured');
  });

  it('serves installed teams on a stage that lists none of its own (distributed only)', async () => {
    const none: WorkspaceAllowList = { teamIds: [], enterpriseId: undefined, appId: 'A0BRIDGE' };
    expect(await gateReason(origin(['T0BBB']), none, installed('T0BBB'))).toBeNull();
    expect(await gateReason(origin(['T0NONE']), none, installed('T0BBB'))).toBe('team');
    expect(await gateReason(origin(['T0BBB']), none, undefined)).toBe('not_configured');
  });

  it('serves the uninstall events of our app whatever the team (its installation may be gone), only on a distributed stage', async () => {
    expect(await gateReason(origin(['T0GONE']), allow, installed(), true)).toBeNull();
    expect(await gateReason(origin(['T0GONE'], { appId: 'A0OTHER' }), allow, installed(), true)).toBe('app');
    expect(await gateReason(origin(['T0GONE']), allow, undefined, true)).toBe('team');
  });

  it('is the allow-list alone without installations (a stage that is not distributed)', async () => {
    expect(await gateReason(origin(['T0BBB']), allow, undefined)).toBe('team');
    expect(await gateReason(origin(['T0STACK']), allow, undefined)).toBeNull();
  });
});

describe("the gate's installation cache", () => {
  function installation(teamId: string, appId = 'A0BRIDGE'): Installation {
    return installationOf({ teamId, appId });
  }

  class CountingStore extends MemoryInstallationStore {
    reads = 0;
    override get(id: string) {
      this.reads++;
      return super.get(id);
    }
  }

  it('reads once per positive TTL: a removed team is served until its entry lapses, then refused', async () => {
    const store = new CountingStore();
    await store.save(installation('T0BBB'));
    let now = 0;
    const cache = new InstalledTeamsCache(store, 'A0BRIDGE', () => now);
    expect(await cache.isInstalled('T0BBB')).toBe(true);
    await store.delete('T0BBB');
    now = INSTALLED_TTL_MS.installed - 1;
    expect(await cache.isInstalled('T0BBB')).toBe(true);
    expect(store.reads).toBe(1);
    now = INSTALLED_TTL_MS.installed;
    expect(await cache.isInstalled('T0BBB')).toBe(false);
    expect(store.reads).toBe(2);
  });

  it('remembers a team without an installation for the shorter negative TTL', async () => {
    const store = new CountingStore();
    let now = 0;
    const cache = new InstalledTeamsCache(store, 'A0BRIDGE', () => now);
    expect(await cache.isInstalled('T0NEW')).toBe(false);
    await store.save(installation('T0NEW'));
    now = INSTALLED_TTL_MS.notInstalled - 1;
    expect(await cache.isInstalled('T0NEW')).toBe(false);
    now = INSTALLED_TTL_MS.notInstalled;
    expect(await cache.isInstalled('T0NEW')).toBe(true);
    expect(INSTALLED_TTL_MS.notInstalled).toBeLessThan(INSTALLED_TTL_MS.installed);
  });

  it('does not count an installation of another app as ours', async () => {
    const store = new CountingStore();
    await store.save(installation('T0BBB', 'A0OTHER'));
    expect(await new InstalledTeamsCache(store, 'A0BRIDGE', () => 0).isInstalled('T0BBB')).toBe(false);
  });
});

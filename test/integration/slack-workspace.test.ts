/**
 * The Slack workspace adapter (shared/adapters/slack-workspace.ts) against the local Slack server:
 * user groups (usergroups.users.list, cached), whether the bot can post in a channel
 * (conversations.info), and Slack's errors in the domain's vocabulary.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalSlackServer } from '../../local/slack/server';
import { SlackWorkspace } from '../../shared/adapters/slack-workspace';
import { NeedsOperatorFix, Unavailable } from '../../shared/errors';
import { staticSecret } from '../../shared/secrets';

const TOKEN = 'xoxb-workspace-test';
let slack: LocalSlackServer;
let now = 0;

/** A generous request timeout: the product's 1 s (a slash command answers within 3 s) is too short for a loaded machine. */
function workspace(token = TOKEN): SlackWorkspace {
  const options = { token: staticSecret(token), slackApiUrl: slack.apiUrl, clock: { now: () => now }, requestTimeoutMs: 15_000 };
  return new SlackWorkspace(options);
}

beforeAll(async () => {
  slack = await LocalSlackServer.start({
    tokens: [TOKEN],
    memberChannels: ['C0IN'],
    knownChannels: ['C0OUT', 'C0OLD'],
    archivedChannels: ['C0OLD'],
    userGroups: { S0OPS: ['U1', 'U2'], S0EMPTY: [] },
  });
});

afterAll(() => slack.close());

beforeEach(() => {
  slack.reset();
  slack.clearFaults();
  now = 1_000_000;
});

describe('user groups', () => {
  it("reads a group's members and keeps them five minutes (Slack tier 2)", async () => {
    const ws = workspace();
    expect([...(await ws.membersOf('S0OPS'))].sort()).toEqual(['U1', 'U2']);
    expect(await ws.membersOf('S0EMPTY')).toEqual(new Set());
    now += 4 * 60_000;
    await ws.membersOf('S0OPS');
    expect(slack.calls('usergroups.users.list').map((c) => c.args['usergroup'])).toEqual(['S0OPS', 'S0EMPTY']);
    now += 2 * 60_000;
    await ws.membersOf('S0OPS');
    expect(slack.calls('usergroups.users.list')).toHaveLength(3);
  });

  it('an unknown group or a bad token is an operator fix; an outage is Unavailable; nothing is cached', async () => {
    await expect(workspace().membersOf('S0NOPE')).rejects.toThrow(NeedsOperatorFix);
    await expect(workspace().membersOf('S0NOPE')).rejects.toThrow(/usergroups:read/);
    await expect(workspace('xoxb-wrong').membersOf('S0OPS')).rejects.toThrow(NeedsOperatorFix);
    slack.injectFault({ method: 'usergroups.users.list', kind: 'server_error', times: 1 });
    const ws = workspace();
    await expect(ws.membersOf('S0OPS')).rejects.toThrow(Unavailable);
    expect(await ws.membersOf('S0OPS')).toEqual(new Set(['U1', 'U2']));
  });
});

describe('whether the bot can post', () => {
  it('member, not a member (naming the bot), archived, not found', async () => {
    const ws = workspace();
    expect(await ws.postingAccess('C0IN')).toEqual({ canPost: true });
    expect(await ws.postingAccess('C0OUT')).toEqual({ canPost: false, reason: 'not_member', botUserId: 'U0LOCALBOT' });
    expect(await ws.postingAccess('C0OLD')).toEqual({ canPost: false, reason: 'archived' });
    expect(await ws.postingAccess('D0SOMEONE')).toEqual({ canPost: false, reason: 'not_found', botUserId: 'U0LOCALBOT' });
    slack.inviteBot('C0OUT');
    expect(await ws.postingAccess('C0OUT')).toEqual({ canPost: true });
  });

  it('a missing scope is an operator fix saying which scope', async () => {
    slack.injectFault({ method: 'conversations.info', kind: 'slack_error', error: 'missing_scope', times: 1 });
    await expect(workspace().postingAccess('C0IN')).rejects.toThrow(/channels:read/);
  });
});

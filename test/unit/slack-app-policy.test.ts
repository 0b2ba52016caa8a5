/**
 * The `slackAccess` decision (shared/slack-app/policy.ts): every rule × verb kind × channel
 * restriction, a user group that can't be read refusing (fail closed), the verb table's column, and
 * the refusal texts users see (snapshot).
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_VERBS, accessOf } from '../../shared/slack-app/commands';
import {
  authorize,
  authorizeChannel,
  DEFAULT_SLACK_ACCESS_POLICY,
  slackAccessPolicyFromEnv,
  type Refusal,
  type SlackAccessPolicy,
} from '../../shared/slack-app/policy';
import { cannotPostReply, refusalReply } from '../../shared/slack-app/replies';
import { StaticUserGroups } from '../support/user-groups';

const groups = new StaticUserGroups({ S0OPS: ['U0OPS'] });
const RULES: Record<string, SlackAccessPolicy['changes']> = {
  everyone: { kind: 'everyone' },
  users: { kind: 'users', userIds: ['U0ANA', 'U0BO'] },
  userGroup: { kind: 'userGroup', groupId: 'S0OPS' },
};
/** Who each rule lets change. */
const ALLOWED_BY_RULE: Record<string, string[]> = {
  everyone: ['U0ANA', 'U0BO', 'U0OPS', 'U0EVE'],
  users: ['U0ANA', 'U0BO'],
  userGroup: ['U0OPS'],
};
const USERS = ['U0ANA', 'U0BO', 'U0OPS', 'U0EVE'];
const FENCED = { 'p-volt': ['C0HOME'] };

describe('authorize', () => {
  const cases = Object.keys(RULES).flatMap((rule) =>
    USERS.flatMap((user) =>
      (['read', 'change'] as const).flatMap((access) =>
        ([undefined, 'p-volt', 'p-other'] as const).flatMap((projectId) =>
          (['C0HOME', 'C0ELSE'] as const).map((channel) => ({ rule, user, access, projectId, channel })),
        ),
      ),
    ),
  );

  it.each(cases)('$rule: $user $access $projectId in $channel', async ({ rule, user, access, projectId, channel }) => {
    const policy: SlackAccessPolicy = { changes: RULES[rule]!, changeChannels: FENCED };
    const decision = await authorize({ userId: user, access, channel, projectId }, policy, groups);
    const userMay = ALLOWED_BY_RULE[rule]!.includes(user);
    const channelMay = projectId !== 'p-volt' || channel === 'C0HOME';
    const expected = access === 'read' || (userMay && channelMay);
    expect(decision.allowed).toBe(expected);
    if (!decision.allowed) {
      // Who is decided first: a user who may not change is told who can, whatever the channel.
      const kind = userMay ? 'wrong_channel' : rule === 'users' ? 'not_listed' : 'not_in_group';
      expect(decision.refusal.kind).toBe(kind);
    }
  });

  it('reads never look the group up; changes do', async () => {
    const counting = new StaticUserGroups({ S0OPS: [] });
    const policy: SlackAccessPolicy = { changes: RULES['userGroup']!, changeChannels: {} };
    await authorize({ userId: 'U1', access: 'read', channel: 'C1' }, policy, counting);
    expect(counting.asked).toEqual([]);
    await authorize({ userId: 'U1', access: 'change', channel: 'C1' }, policy, counting);
    expect(counting.asked).toEqual(['S0OPS']);
  });

  it('refuses when the group cannot be read (fail closed), keeping why', async () => {
    const policy: SlackAccessPolicy = { changes: { kind: 'userGroup', groupId: 'S0GONE' }, changeChannels: {} };
    const decision = await authorize({ userId: 'U0OPS', access: 'change', channel: 'C1' }, policy, groups);
    expect(decision).toMatchObject({ allowed: false, refusal: { kind: 'group_unreadable', groupId: 'S0GONE' } });
  });

  it('checks the channel alone once the project is known, and ignores projects the policy does not name', () => {
    const policy: SlackAccessPolicy = { ...DEFAULT_SLACK_ACCESS_POLICY, changeChannels: FENCED };
    expect(authorizeChannel('p-volt', 'C0HOME', policy)).toEqual({ allowed: true });
    expect(authorizeChannel('p-volt', 'C0ELSE', policy)).toEqual({
      allowed: false,
      refusal: { kind: 'wrong_channel', projectId: 'p-volt', channels: ['C0HOME'] },
    });
    expect(authorizeChannel('constructor', 'C0ELSE', policy)).toEqual({ allowed: true });
  });
});

describe('the command table decides read or change for every verb', () => {
  it.each(COMMAND_VERBS)('%s', (verb) => {
    const changes = ['subscribe', 'unsubscribe', 'mute', 'unmute', 'mode', 'filter', 'quiet', 'weekly'];
    expect(accessOf(verb)).toBe(changes.includes(verb) ? 'change' : 'read');
  });
});

describe('the policy from the environment', () => {
  it('is the default when unset, and the stage spelling otherwise', () => {
    expect(slackAccessPolicyFromEnv({})).toEqual(DEFAULT_SLACK_ACCESS_POLICY);
    expect(
      slackAccessPolicyFromEnv({ SLACK_ACCESS_POLICY: '{"changes":{"userGroup":"S0OPS"},"changeChannels":{"p":["C0HOME"]}}' }),
    ).toEqual({
      changes: { kind: 'userGroup', groupId: 'S0OPS' },
      changeChannels: { p: ['C0HOME'] },
    });
  });

  it('says what to fix when it is not JSON or not a policy', () => {
    expect(() => slackAccessPolicyFromEnv({ SLACK_ACCESS_POLICY: '{nope' })).toThrow(/SLACK_ACCESS_POLICY is not JSON/);
    expect(() => slackAccessPolicyFromEnv({ SLACK_ACCESS_POLICY: '{"changes":{"users":["bob"]}}' })).toThrow(/not a Slack user id/);
  });
});

describe('refusal texts', () => {
  const refusals: Record<string, Refusal> = {
    oneUser: { kind: 'not_listed', userIds: ['U0ANA'] },
    twoUsers: { kind: 'not_listed', userIds: ['U1', 'U2'] },
    manyUsers: { kind: 'not_listed', userIds: Array.from({ length: 12 }, (_, i) => `U${i + 10}`) },
    group: { kind: 'not_in_group', groupId: 'S0614TZR7' },
    groupUnreadable: { kind: 'group_unreadable', groupId: 'S0614TZR7', cause: new Error('missing_scope') },
    oneChannel: { kind: 'wrong_channel', projectId: 'p-volt', channels: ['C0HOME'] },
    twoChannels: { kind: 'wrong_channel', projectId: 'p-volt', channels: ['C0HOME', 'C0OPS'] },
  };

  it.each(Object.keys(refusals))('%s', (label) => {
    const answer = refusalReply(refusals[label]!, { id: 'p-volt', name: 'Voltway' });
    expect(answer.response_type).toBe('ephemeral');
    expect(answer.text).toMatchSnapshot();
  });

  it.each(['not_member', 'archived', 'not_found'] as const)('cannot post: %s', (reason) => {
    const answer = cannotPostReply({ canPost: false, reason, botUserId: 'U0BOT' }, 'C0NEW', { id: 'p-volt', name: 'Voltway' });
    expect(answer.text).toMatchSnapshot();
  });
});

/**
 * Who may do what through the Slack app: the stage file's `slackAccess` object, validated once (at
 * synth by infra/config.ts, at cold start from the SLACK_ACCESS_POLICY variable) into a typed policy.
 *
 * Reading (`status`, `projects`, `list`, `help`) is open to every member of the allowed workspace and
 * answered ephemerally; changing (`subscribe`, `unsubscribe`, `mute`, `unmute`, `mode`, the digest's
 * buttons) follows `changes`, and for a project named in `changeChannels` only in those channels.
 *
 * ```json
 * "slackAccess": {
 *   "changes": "everyone" | { "users": ["U012AB3CD"] } | { "userGroup": "S0614TZR7" },
 *   "changeChannels": { "<project id>": ["C0123456789"] }
 * }
 * ```
 */
import { ConfigError, type Env } from '../config-env';
import { ENV } from '../contracts';
import type { ChangeRule, SlackAccessPolicy, UserGroupMembers, VerbAccess } from './ports';

export type { ChangeRule, SlackAccessPolicy } from './ports';

/** The default: every member may change, in any channel (the home channel can't be taken away: shared/routing.ts). */
export const DEFAULT_SLACK_ACCESS_POLICY: SlackAccessPolicy = { changes: { kind: 'everyone' }, changeChannels: {} };

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const GROUP_ID = /^S[A-Z0-9]{2,}$/;
const CHANNEL_ID = /^[CG][A-Z0-9]{2,}$/;

/**
 * Validates a `slackAccess` value. `key` names the setting and `where` the place to fix it (the
 * stage file, or the variable) in the ConfigError. Undefined means the default policy.
 */
export function parseSlackAccessPolicy(value: unknown, key: string, where: string): SlackAccessPolicy {
  const fail = (problem: string) => new ConfigError(key, problem, `${where}: "${key}" ${problem}. Fix "${key}" in ${where}.`);
  if (value === undefined || value === null) return DEFAULT_SLACK_ACCESS_POLICY;
  if (!isObject(value)) throw fail(`must be an object such as {"changes": "everyone"}, got ${show(value)}`);
  const unknown = Object.keys(value).find((k) => k !== 'changes' && k !== 'changeChannels');
  if (unknown !== undefined) throw fail(`has an unknown key "${unknown}" (known: changes, changeChannels)`);
  return { changes: changeRule(value['changes'], fail), changeChannels: changeChannels(value['changeChannels'], fail) };
}

/**
 * The policy from SLACK_ACCESS_POLICY (the stage file's `slackAccess` as JSON, set by the stack), read
 * once at cold start by the Slack and digest functions; unset means the default policy.
 */
export function slackAccessPolicyFromEnv(env: Env): SlackAccessPolicy {
  const raw = env[ENV.slackAccessPolicy]?.trim();
  if (raw === undefined || raw === '') return DEFAULT_SLACK_ACCESS_POLICY;
  const where = `the ${ENV.slackAccessPolicy} variable (the stage file's "slackAccess", set by the stack)`;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(ENV.slackAccessPolicy, `is not JSON: set "slackAccess" in the stage file and deploy again`);
  }
  return parseSlackAccessPolicy(value, 'slackAccess', where);
}

function changeRule(value: unknown, fail: (problem: string) => ConfigError): ChangeRule {
  if (value === undefined || value === 'everyone') return { kind: 'everyone' };
  const hint = '"changes" must be "everyone", {"users": ["U…", …]} or {"userGroup": "S…"}';
  if (!isObject(value)) throw fail(`${hint}, got ${show(value)}`);
  const keys = Object.keys(value);
  if (keys.length !== 1) throw fail(`${hint}, got ${show(value)}`);
  if ('users' in value) {
    const users = value['users'];
    if (!Array.isArray(users) || users.length === 0)
      throw fail(`"changes.users" must be a non-empty list of user ids (U…), got ${show(users)}`);
    const bad = (users as unknown[]).find((u) => typeof u !== 'string' || !USER_ID.test(u));
    if (bad !== undefined) throw fail(`"changes.users" holds ${show(bad)}, which is not a Slack user id (U… or W…)`);
    return { kind: 'users', userIds: users as string[] };
  }
  if ('userGroup' in value) {
    const group = value['userGroup'];
    if (typeof group !== 'string' || !GROUP_ID.test(group))
      throw fail(`"changes.userGroup" must be a user group id (S…, from the group's "Copy group ID"), got ${show(group)}`);
    return { kind: 'userGroup', groupId: group };
  }
  throw fail(`${hint}, got ${show(value)}`);
}

function changeChannels(value: unknown, fail: (problem: string) => ConfigError): Record<string, string[]> {
  if (value === undefined) return {};
  if (!isObject(value)) throw fail(`"changeChannels" must map project ids to lists of channel ids, got ${show(value)}`);
  const out: Record<string, string[]> = {};
  for (const [project, channels] of Object.entries(value)) {
    if (project.trim() === '') throw fail('"changeChannels" has an empty project id');
    if (!Array.isArray(channels) || channels.length === 0)
      throw fail(`"changeChannels.${project}" must be a non-empty list of channel ids (C…), got ${show(channels)}`);
    const bad = (channels as unknown[]).find((c) => typeof c !== 'string' || !CHANNEL_ID.test(c));
    if (bad !== undefined)
      throw fail(`"changeChannels.${project}" holds ${show(bad)}, which is not a channel id (C… or G…; names can be renamed)`);
    out[project] = channels as string[];
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

// --- The decision --------------------------------------------------------------------------------

/** Why a change was refused; the reply says who can (./replies.ts `refusalReply`). */
export type Refusal =
  | { kind: 'not_listed'; userIds: readonly string[] }
  | { kind: 'not_in_group'; groupId: string }
  /** The group could not be read: refused (fail closed); `cause` is logged. */
  | { kind: 'group_unreadable'; groupId: string; cause: unknown }
  | { kind: 'wrong_channel'; projectId: string; channels: readonly string[] };

export type Decision = { allowed: true } | { allowed: false; refusal: Refusal };

export interface AccessRequest {
  userId: string;
  /** The verb's column in the command table (or the button's kind). */
  access: VerbAccess;
  channel: string;
  /** The project, once known: a project named in `changeChannels` is changed only there. */
  projectId?: string | undefined;
}

const ALLOWED: Decision = { allowed: true };

/** May this user do this, here? Reads always; changes as the policy says (who, then where once the project is known). */
export async function authorize(request: AccessRequest, policy: SlackAccessPolicy, groups: UserGroupMembers): Promise<Decision> {
  if (request.access === 'read') return ALLOWED;
  const who = await authorizeUser(request.userId, policy.changes, groups);
  if (!who.allowed || request.projectId === undefined) return who;
  return authorizeChannel(request.projectId, request.channel, policy);
}

/** The user check, made at the endpoint before anything is done or queued. */
export async function authorizeUser(userId: string, rule: ChangeRule, groups: UserGroupMembers): Promise<Decision> {
  switch (rule.kind) {
    case 'everyone':
      return ALLOWED;
    case 'users':
      return rule.userIds.includes(userId) ? ALLOWED : refused({ kind: 'not_listed', userIds: rule.userIds });
    case 'userGroup':
      return memberOf(userId, rule.groupId, groups);
  }
}

async function memberOf(userId: string, groupId: string, groups: UserGroupMembers): Promise<Decision> {
  let members: ReadonlySet<string>;
  try {
    members = await groups.membersOf(groupId);
  } catch (cause) {
    return refused({ kind: 'group_unreadable', groupId, cause });
  }
  return members.has(userId) ? ALLOWED : refused({ kind: 'not_in_group', groupId });
}

/** The channel check, made once the project is known (in the deferred worker for `subscribe`). */
export function authorizeChannel(projectId: string, channel: string, policy: SlackAccessPolicy): Decision {
  const channels = Object.hasOwn(policy.changeChannels, projectId) ? policy.changeChannels[projectId] : undefined;
  if (channels === undefined || channels.includes(channel)) return ALLOWED;
  return refused({ kind: 'wrong_channel', projectId, channels });
}

function refused(refusal: Refusal): Decision {
  return { allowed: false, refusal };
}

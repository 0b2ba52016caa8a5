/**
 * Only our workspace and our app. A request Slack signed with our app's signing secret can still
 * come from another workspace that installed the same app (a distributed app, or one re-installed
 * elsewhere), from another org of an Enterprise Grid, or be meant for another app sharing the secret.
 * After the signature check, the request's ids are read in one parse and compared with the stage's
 * allow-list:
 *
 * - `SLACK_TEAM_IDS`: the workspaces (T…) served. Every team id the request carries must be listed:
 *   the command's `team_id`; a click's `team.id` and its user's `user.team_id` (a member of another
 *   workspace clicking in a Slack Connect channel is refused).
 * - `SLACK_ENTERPRISE_ID` (Grid, optional): when set, the request's `enterprise_id` must equal it. With
 *   the team list empty, any workspace of that org is served (an org-wide install), but a click must
 *   carry one team only: its `user.team_id` must be its `team.id`. A Slack Connect guest's click names
 *   the org (the channel's) and the guest's own workspace, which nothing says is in the org, so it is
 *   refused (a member of another workspace of the org clicking in a channel shared across them is too:
 *   list the org's workspaces in `SLACK_TEAM_IDS` to serve them). With both set, both must match.
 * - `SLACK_APP_ID`: the request's `api_app_id` must equal it. Required: a stage that names no app
 *   (or neither teams nor an org) serves nobody, answering 403 `workspace_not_configured` until the
 *   stage file has the ids (`npx bridge doctor` prints the lines to add).
 */
import { ConfigError, optionalString, type Env } from '../config-env';
import { ENV, HTTP_PATHS } from '../contracts';
import { isRecord, parseJsonOrUndefined } from '../util';

/** Slack's id shapes: teams T…, Grid orgs E…, apps A…. Exported for the stage-file validation. */
export const SLACK_ID_PATTERNS = {
  team: /^T[A-Z0-9]{2,20}$/,
  enterprise: /^E[A-Z0-9]{2,20}$/,
  app: /^A[A-Z0-9]{2,20}$/,
} as const;

export interface WorkspaceAllowList {
  teamIds: readonly string[];
  enterpriseId: string | undefined;
  appId: string | undefined;
}

/** The ids a request carries (every one Slack sends; missing ones are absent). */
export interface RequestOrigin {
  teamIds: string[];
  enterpriseId: string | undefined;
  appId: string | undefined;
}

/** Why a signed request is not served: the stage names nobody, or which id is not ours. */
export type ForeignReason = 'not_configured' | 'team' | 'enterprise' | 'app';

/** Reads the allow-list once at cold start; a malformed id fails it, naming the variable. */
export function readWorkspaceAllowList(env: Env): WorkspaceAllowList {
  const teams = optionalString(env, ENV.slackTeamIds);
  const teamIds = teams === undefined ? [] : [...new Set(teams.split(',').map((id) => id.trim()))].filter((id) => id !== '');
  for (const id of teamIds) checkId(ENV.slackTeamIds, id, 'team', 'a comma-separated list of workspace ids such as T0123ABCD');
  const enterpriseId = optionalString(env, ENV.slackEnterpriseId);
  if (enterpriseId !== undefined) checkId(ENV.slackEnterpriseId, enterpriseId, 'enterprise', 'an Enterprise Grid org id such as E0123ABCD');
  const appId = optionalString(env, ENV.slackAppId);
  if (appId !== undefined) checkId(ENV.slackAppId, appId, 'app', 'the Slack app id such as A0123ABCD (Basic Information → App ID)');
  return { teamIds, enterpriseId, appId };
}

function checkId(variable: string, id: string, kind: keyof typeof SLACK_ID_PATTERNS, mustBe: string): void {
  if (!SLACK_ID_PATTERNS[kind].test(id))
    throw new ConfigError(variable, `must be ${mustBe}; "${id.slice(0, 40)}" is not (set it from the stage file's Slack ids)`);
}

/** Whether the stage names enough to serve anyone: an app, and teams or an org. */
export function isConfigured(allow: WorkspaceAllowList): boolean {
  return allow.appId !== undefined && (allow.teamIds.length > 0 || allow.enterpriseId !== undefined);
}

/** Null when the request is from our workspace (or org) and for our app; otherwise why not. */
export function foreignReason(origin: RequestOrigin, allow: WorkspaceAllowList): ForeignReason | null {
  if (!isConfigured(allow)) return 'not_configured';
  if (origin.appId !== allow.appId) return 'app';
  if (allow.enterpriseId !== undefined && origin.enterpriseId !== allow.enterpriseId) return 'enterprise';
  // The whole org (checked above); two teams on one click are a guest's team and the channel's.
  if (allow.teamIds.length === 0) return origin.teamIds.length > 1 ? 'team' : null;
  if (origin.teamIds.length === 0 || origin.teamIds.some((id) => !allow.teamIds.includes(id))) return 'team';
  return null;
}

/** The ids of a signed request body: a slash command's form fields, or a click's `payload` JSON. */
export function requestOrigin(path: string, rawBody: string): RequestOrigin {
  const form = new URLSearchParams(rawBody);
  if (path === HTTP_PATHS.slackCommands) {
    return {
      teamIds: present([form.get('team_id')]),
      enterpriseId: text(form.get('enterprise_id')),
      appId: text(form.get('api_app_id')),
    };
  }
  const payload = parseJsonOrUndefined(form.get('payload'));
  if (!isRecord(payload)) return { teamIds: [], enterpriseId: undefined, appId: undefined };
  const field = (parent: unknown, name: string) => (isRecord(parent) ? parent[name] : undefined);
  return {
    teamIds: present([field(payload['team'], 'id'), field(payload['user'], 'team_id')]),
    enterpriseId: text(field(payload['enterprise'], 'id')),
    appId: text(payload['api_app_id']),
  };
}

function present(values: readonly unknown[]): string[] {
  return [...new Set(values.map(text).filter((id): id is string => id !== undefined))];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

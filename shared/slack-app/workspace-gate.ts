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
 * - A distributed stage (`slackClientId`: installed through "Add to Slack") serves, besides those, every
 *   workspace that installed our app (`inst#<team>`), and every workspace of an org that installed it
 *   org-wide (`inst#<org>`, a request naming one team only, as above). The look-up is cached per
 *   container (`InstalledTeamsCache`) so Slack's 3 s ack is not spent on it.
 */
import { ConfigError, optionalString, type Env } from '../config-env';
import { ENV, HTTP_PATHS } from '../contracts';
import type { InstallationStore } from '../installations/ports';
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

/** Whether our app is installed in a workspace (T…) or org-wide in an org (E…): the installations the gate admits. */
export interface InstalledTeams {
  /** Throws when the table cannot say (the request is answered 503, never admitted on a guess). */
  isInstalled(id: string): Promise<boolean>;
}

/**
 * Null when the request is served: by the stage's allow-list, or (a distributed stage, `installed`
 * given) because every team it carries installed our app, or it carries one team of an org that
 * installed it org-wide, or it is an event that comes after an uninstall (`afterUninstall`, for our
 * app: the workspace's installation may be gone already). Otherwise the allow-list's reason.
 */
export async function gateReason(
  origin: RequestOrigin,
  allow: WorkspaceAllowList,
  installed: InstalledTeams | undefined,
  afterUninstall = false,
): Promise<ForeignReason | null> {
  const listed = foreignReason(origin, allow);
  if (listed === null || installed === undefined || listed === 'app') return listed;
  if (allow.appId === undefined) return 'not_configured';
  if (origin.appId !== allow.appId) return 'app';
  if (afterUninstall) return null;
  if (origin.teamIds.length === 0) return listed;
  let admitted = true;
  for (const team of origin.teamIds) if (!allow.teamIds.includes(team) && !(await installed.isInstalled(team))) admitted = false;
  if (admitted) return null;
  // An org-wide install covers its workspaces; a click naming two teams (a guest's) is not known to be in it.
  const org = origin.enterpriseId;
  if (origin.teamIds.length === 1 && org !== undefined && (await installed.isInstalled(org))) return null;
  return listed === 'not_configured' ? 'team' : listed;
}

/**
 * How long the gate trusts what it read of an installation, per container. Positive: 60 s, one read a
 * minute per workspace however busy, and the longest a workspace is still served after its uninstall's
 * purge deleted `inst#` (its data is purged by then; only what a command shows of its connections'
 * projects is left to see). Negative: 10 s, so a workspace that installs right after a refusal is served
 * within seconds (Slack sends no command from a workspace without the app, so refusals are rare).
 */
export const INSTALLED_TTL_MS = { installed: 60_000, notInstalled: 10_000 } as const;
/** Entries kept per container; the oldest goes first (a flood of team ids cannot grow it without bound). */
const INSTALLED_CACHE_MAX = 1000;

/** `InstalledTeams` on the installation store, for our app only, cached per container (`INSTALLED_TTL_MS`). */
export class InstalledTeamsCache implements InstalledTeams {
  private readonly entries = new Map<string, { installed: boolean; untilMs: number }>();

  constructor(
    private readonly store: Pick<InstallationStore, 'get'>,
    private readonly appId: string | undefined,
    private readonly now: () => number,
  ) {}

  async isInstalled(id: string): Promise<boolean> {
    const nowMs = this.now();
    const cached = this.entries.get(id);
    if (cached !== undefined && cached.untilMs > nowMs) return cached.installed;
    const installation = await this.store.get(id);
    // An installation that names another app is not ours (the OAuth function stores ours only).
    const installed = installation !== undefined && (installation.appId === undefined || installation.appId === this.appId);
    this.entries.delete(id);
    if (this.entries.size >= INSTALLED_CACHE_MAX) this.entries.delete(this.entries.keys().next().value ?? '');
    this.entries.set(id, { installed, untilMs: nowMs + (installed ? INSTALLED_TTL_MS.installed : INSTALLED_TTL_MS.notInstalled) });
    return installed;
  }
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

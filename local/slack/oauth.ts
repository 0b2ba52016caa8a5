/**
 * Slack's OAuth v2 install flow, played locally: the install page (`/oauth/v2/authorize`, where a user of
 * a workspace, or an org admin for an org-wide install, allows the app) and `oauth.v2.access`, which
 * exchanges the code for a bot token and, with token rotation, a refresh token for a new pair.
 *
 * As Slack does: a code is single use, and so is a refresh token (spending it twice answers
 * `invalid_grant`: two refreshers racing lose a token pair), and a refresh also ends the old access
 * token's life. Teams are named on the install page (`?team=T…&team_name=…`, `&enterprise=E…`,
 * `&org=1` for an org-wide install); the default is the server's own workspace. Without `team`, the page
 * offers the server's own workspace and each of `workspaces`, as Slack's workspace picker does.
 */
import { randomBytes } from 'node:crypto';
import { escapeHtml } from '../preview/mrkdwn';
import { fail, ok, type SlackAnswer } from './protocol';

export const AUTHORIZE_PATH = '/oauth/v2/authorize';
const ALLOW_PATH = '/oauth/v2/authorize/allow';

export interface LocalSlackOAuthOptions {
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of an access token with rotation (`expires_in`); default 12 h as Slack's. */
  tokenLifetimeSeconds?: number;
  /** false: tokens never expire and no refresh token is issued (an app without token rotation). Default true. */
  tokenRotation?: boolean;
  /** Further workspaces of this Slack (the agency's clients') the install page offers besides the server's own. */
  workspaces?: readonly LocalWorkspace[];
}

export interface LocalWorkspace {
  teamId: string;
  name: string;
}

/** Who installed where: what the code stands for. */
interface Grant {
  teamId: string | undefined;
  teamName: string | undefined;
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
  scopes: string;
  userId: string;
  redirectUri: string | undefined;
}

export interface RefreshRecord {
  refreshToken: string;
  ok: boolean;
  error: string | undefined;
}

export class LocalSlackOAuth {
  readonly clientId: string;
  readonly clientSecret: string;
  private readonly codes = new Map<string, Grant>();
  /** Live refresh tokens and the grant each renews. */
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly refreshLog: RefreshRecord[] = [];
  /** Teams (or orgs) whose install exchanged a code, in order. */
  private readonly installed = new Set<string>();

  /** `issued` hears of every access token handed out and its team (or org): the Web API accepts it as that team's. */
  constructor(
    private readonly identity: { teamId: string; team: string; appId: string; botUserId: string },
    private readonly options: LocalSlackOAuthOptions = {},
    private readonly issued: (token: string, teamId: string | undefined) => void = () => undefined,
  ) {
    this.clientId = options.clientId ?? '1000.2000';
    this.clientSecret = options.clientSecret ?? 'local-client-secret';
  }

  /** Every refresh attempt, oldest first. */
  refreshes(): RefreshRecord[] {
    return this.refreshLog.map((r) => ({ ...r }));
  }

  /** The server's own workspace, then the others the install page offers. */
  workspaces(): LocalWorkspace[] {
    return [{ teamId: this.identity.teamId, name: this.identity.team }, ...(this.options.workspaces ?? [])];
  }

  /** Teams (or orgs) the app was installed in through a code exchange. */
  installedTeams(): string[] {
    return [...this.installed];
  }

  /** The answer to a request on the install page or `oauth.v2.access`, or undefined when the path is not OAuth's. */
  serve(path: string, query: URLSearchParams, args: () => Record<string, unknown>): SlackAnswer | undefined {
    if (path === AUTHORIZE_PATH) return this.installPage(query);
    if (path === ALLOW_PATH) return this.allow(query);
    if (path === '/api/oauth.v2.access') return this.access(args());
    return undefined;
  }

  private installPage(query: URLSearchParams): SlackAnswer {
    if (query.get('client_id') !== this.clientId) return { status: 400, body: 'invalid client_id' };
    const teamId = query.get('team') ?? this.identity.teamId;
    const team = query.get('team_name') ?? (teamId === this.identity.teamId ? this.identity.team : teamId);
    const where = query.get('org') === '1' ? `the org ${query.get('enterprise') ?? ''}` : `the workspace ${team}`;
    const allow = `${ALLOW_PATH}?${query.toString()}`;
    const html = `<!doctype html><title>Install</title><h1>Install the app in ${escapeHtml(where)}</h1><p>It asks for: ${escapeHtml(query.get('scope') ?? '')}</p><a id="allow" href="${escapeHtml(allow)}">Allow</a>${query.has('team') ? '' : this.otherWorkspaces(query)}`;
    return { status: 200, body: html, headers: { 'content-type': 'text/html; charset=utf-8' } };
  }

  /** One Allow link per further workspace (`#allow-T…`), for a page opened without `team`. */
  private otherWorkspaces(query: URLSearchParams): string {
    const links = (this.options.workspaces ?? []).map((w) => {
      const chosen = new URLSearchParams(query);
      chosen.set('team', w.teamId);
      chosen.set('team_name', w.name);
      return `<li><a id="allow-${escapeHtml(w.teamId)}" href="${escapeHtml(`${ALLOW_PATH}?${chosen.toString()}`)}">Allow in ${escapeHtml(w.name)}</a></li>`;
    });
    return links.length === 0 ? '' : `<p>Or in another workspace:</p><ul>${links.join('')}</ul>`;
  }

  private allow(query: URLSearchParams): SlackAnswer {
    const redirectUri = query.get('redirect_uri');
    if (!redirectUri) return { status: 400, body: 'redirect_uri is required' };
    const isEnterpriseInstall = query.get('org') === '1';
    const code = `code-${randomBytes(12).toString('hex')}`;
    this.codes.set(code, {
      teamId: isEnterpriseInstall ? undefined : (query.get('team') ?? this.identity.teamId),
      teamName: isEnterpriseInstall ? undefined : (query.get('team_name') ?? this.identity.team),
      enterpriseId: query.get('enterprise') ?? undefined,
      isEnterpriseInstall,
      scopes: query.get('scope') ?? '',
      userId: query.get('user') ?? 'U0INSTALLER',
      redirectUri,
    });
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    const state = query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    return { status: 302, body: '', headers: { location: target.toString() } };
  }

  private access(args: Record<string, unknown>): SlackAnswer {
    if (args.client_id !== this.clientId || args.client_secret !== this.clientSecret) return fail('invalid_client_id');
    if (args.grant_type === 'refresh_token') return this.refresh(typeof args.refresh_token === 'string' ? args.refresh_token : '');
    const code = typeof args.code === 'string' ? args.code : '';
    const grant = this.codes.get(code);
    if (!grant) return fail('invalid_code');
    this.codes.delete(code);
    if (grant.redirectUri !== undefined && args.redirect_uri !== undefined && args.redirect_uri !== grant.redirectUri)
      return fail('bad_redirect_uri');
    this.installed.add(grant.teamId ?? grant.enterpriseId ?? '');
    return ok({ ...this.tokenFields(grant), authed_user: { id: grant.userId } });
  }

  private refresh(refreshToken: string): SlackAnswer {
    const grant = this.refreshTokens.get(refreshToken);
    this.refreshLog.push({ refreshToken, ok: grant !== undefined, error: grant ? undefined : 'invalid_grant' });
    if (!grant) return fail('invalid_grant');
    this.refreshTokens.delete(refreshToken);
    return ok(this.tokenFields(grant));
  }

  private tokenFields(grant: Grant): Record<string, unknown> {
    const rotation = this.options.tokenRotation ?? true;
    const accessToken = `${rotation ? 'xoxe.' : ''}xoxb-${randomBytes(12).toString('hex')}`;
    this.issued(accessToken, grant.teamId ?? grant.enterpriseId);
    const fields: Record<string, unknown> = {
      app_id: this.identity.appId,
      scope: grant.scopes,
      token_type: 'bot',
      access_token: accessToken,
      bot_user_id: this.identity.botUserId,
      team: grant.teamId === undefined ? null : { id: grant.teamId, name: grant.teamName ?? grant.teamId },
      enterprise: grant.enterpriseId === undefined ? null : { id: grant.enterpriseId, name: grant.enterpriseId },
      is_enterprise_install: grant.isEnterpriseInstall,
    };
    if (!rotation) return fields;
    const refreshToken = `xoxe-1-${randomBytes(16).toString('hex')}`;
    this.refreshTokens.set(refreshToken, grant);
    return { ...fields, refresh_token: refreshToken, expires_in: this.options.tokenLifetimeSeconds ?? 43_200 };
  }
}

/**
 * "Add to Slack" through OAuth v2, with `@slack/oauth`'s InstallProvider: the install page
 * (`/slack/install`) hands the browser a signed state and the same state in a cookie; the redirect
 * (`/slack/oauth_redirect`) accepts the code only from the browser holding that cookie (CSRF), exchanges
 * it with `oauth.v2.access`, and stores the installation (shared/installations) under its workspace, or
 * its org for an Enterprise Grid org-wide install. Slack's token refresh is ./slack-token-refresher.ts.
 *
 * InstallProvider speaks node's request and response; a Lambda has neither, so a request is handed to it
 * as the little of IncomingMessage it reads (url, headers) and its answer captured from the few
 * ServerResponse methods it calls. Tokens never reach a log line or an error message.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InstallProvider, type Installation as SlackInstallation, type InstallationQuery } from '@slack/oauth';
import type { Installation } from '../installations/model';
import { installationId, installationIdsFor } from '../installations/model';
import type { InstallationStore } from '../installations/ports';
import type { Clock, Log } from '../ports';
import { redactor, silentLogger } from './slack-poster';

export interface SlackOAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Signs the state parameter (ClearStateStore); any long random secret of the deploy. */
  stateSecret: string;
  /** This bridge's `/slack/oauth_redirect` URL, as listed in the app's redirect URLs. */
  redirectUri: string;
  scopes: string[];
  /** The Web API's base URL (the local Slack server); default Slack's. */
  slackApiUrl?: string | undefined;
  /** Where the browser allows the app; default `https://slack.com/oauth/v2/authorize`. */
  authorizationUrl?: string | undefined;
  store: InstallationStore;
  clock: Clock;
  log: Log;
}

/** A GET on one of the two paths: its query string and the headers InstallProvider reads. */
export interface OAuthRequest {
  rawQueryString: string;
  host: string | undefined;
  cookie: string | undefined;
}

export interface OAuthAnswer {
  statusCode: number;
  headers: Record<string, string>;
  /** Set-Cookie values, one per cookie (API Gateway's `cookies`). */
  cookies: string[];
  body: string;
}

export interface SlackOAuth {
  installPage(request: OAuthRequest): Promise<OAuthAnswer>;
  redirect(request: OAuthRequest): Promise<OAuthAnswer>;
}

export function createSlackOAuth(options: SlackOAuthOptions): SlackOAuth {
  const provider = new InstallProvider({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    stateSecret: options.stateSecret,
    installationStore: slackInstallationStore(options.store, options.clock),
    installUrlOptions: { scopes: options.scopes, redirectUri: options.redirectUri },
    ...(options.authorizationUrl !== undefined ? { authorizationUrl: options.authorizationUrl } : {}),
    clientOptions: { ...(options.slackApiUrl !== undefined ? { slackApiUrl: options.slackApiUrl } : {}), retryConfig: { retries: 1 } },
    logger: silentLogger,
  });
  return {
    async installPage(request) {
      const res = new CapturedResponse();
      await provider.handleInstallPath(incoming(request, '/slack/install'), res.asServerResponse());
      return res.answer();
    },
    async redirect(request) {
      const res = new CapturedResponse();
      await provider.handleCallback(incoming(request, '/slack/oauth_redirect'), res.asServerResponse(), {
        success: (installation, _installOptions, _req, response) => {
          const where = installation.isEnterpriseInstall
            ? `the org ${installation.enterprise?.id ?? ''}`
            : `the workspace ${installation.team?.id ?? ''}`;
          options.log.info('Slack app installed', {
            teamId: installation.team?.id,
            enterpriseId: installation.enterprise?.id,
            isEnterpriseInstall: installation.isEnterpriseInstall === true,
            installedBy: installation.user.id,
          });
          response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
          response.end(successPage(where));
        },
        failure: (error, _installOptions, _req, response) => {
          options.log.warn('Slack app install refused', { code: error.code, reason: redactor('')(error.message) });
          response.writeHead(400, { 'Content-Type': 'text/html; charset=utf-8' });
          response.end(failurePage(error.code));
        },
      });
      return res.answer();
    },
  };
}

/** @slack/oauth's store interface over the bridge's InstallationStore. */
function slackInstallationStore(store: InstallationStore, clock: Clock) {
  return {
    async storeInstallation(installation: SlackInstallation): Promise<void> {
      await store.save(fromSlack(installation, clock.now()));
    },
    async fetchInstallation(query: InstallationQuery<boolean>): Promise<SlackInstallation> {
      for (const id of installationIdsFor(query)) {
        const found = await store.get(id);
        if (found) return toSlack(found);
      }
      throw new Error(`no installation for ${query.isEnterpriseInstall ? (query.enterpriseId ?? '?') : (query.teamId ?? '?')}`);
    },
    async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
      await store.delete(installationId(query));
    },
  };
}

function fromSlack(installation: SlackInstallation, nowMs: number): Installation {
  const bot = installation.bot;
  if (!bot) throw new Error('the install granted no bot token: the app must ask for bot scopes');
  return {
    teamId: installation.team?.id,
    teamName: installation.team?.name,
    enterpriseId: installation.enterprise?.id,
    enterpriseName: installation.enterprise?.name,
    isEnterpriseInstall: installation.isEnterpriseInstall === true,
    appId: installation.appId,
    botUserId: bot.userId,
    botId: bot.id,
    scopes: bot.scopes,
    // @slack/oauth counts in seconds.
    bot: { token: bot.token, refreshToken: bot.refreshToken, expiresAtMs: bot.expiresAt === undefined ? undefined : bot.expiresAt * 1000 },
    installedBy: installation.user.id,
    installedAtMs: nowMs,
  };
}

function toSlack(installation: Installation): SlackInstallation {
  const bot = installation.bot;
  return {
    team: installation.teamId === undefined ? undefined : { id: installation.teamId, ...named(installation.teamName) },
    enterprise:
      installation.enterpriseId === undefined ? undefined : { id: installation.enterpriseId, ...named(installation.enterpriseName) },
    isEnterpriseInstall: installation.isEnterpriseInstall,
    user: { id: installation.installedBy, token: undefined, scopes: undefined },
    bot: {
      token: bot.token,
      scopes: installation.scopes,
      id: installation.botId,
      userId: installation.botUserId,
      ...(bot.refreshToken !== undefined ? { refreshToken: bot.refreshToken } : {}),
      ...(bot.expiresAtMs !== undefined ? { expiresAt: Math.floor(bot.expiresAtMs / 1000) } : {}),
    },
    ...(installation.appId !== undefined ? { appId: installation.appId } : {}),
    tokenType: 'bot',
    authVersion: 'v2',
  };
}

/** A name when there is one (exactOptionalPropertyTypes: absent, never undefined). */
function named(name: string | undefined): { name?: string } {
  return name === undefined ? {} : { name };
}

function incoming(request: OAuthRequest, path: string): IncomingMessage {
  const query = request.rawQueryString === '' ? '' : `?${request.rawQueryString}`;
  const headers: Record<string, string> = { host: request.host ?? 'localhost' };
  if (request.cookie !== undefined) headers['cookie'] = request.cookie;
  return { url: `${path}${query}`, headers } as unknown as IncomingMessage;
}

/** The part of ServerResponse InstallProvider and the page callbacks use, captured as an answer. */
class CapturedResponse {
  private statusCode = 200;
  private readonly headers = new Map<string, string | string[]>();
  private body = '';

  setHeader(name: string, value: string | string[]): this {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): string | string[] | undefined {
    return this.headers.get(name.toLowerCase());
  }

  writeHead(statusCode: number, headers?: Record<string, string>): this {
    this.statusCode = statusCode;
    for (const [name, value] of Object.entries(headers ?? {})) this.setHeader(name, value);
    return this;
  }

  end(body?: string): this {
    this.body = body ?? '';
    return this;
  }

  asServerResponse(): ServerResponse {
    return this as unknown as ServerResponse;
  }

  answer(): OAuthAnswer {
    const headers: Record<string, string> = {};
    let cookies: string[] = [];
    for (const [name, value] of this.headers) {
      if (name === 'set-cookie') cookies = Array.isArray(value) ? value : [value];
      else headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { statusCode: this.statusCode, headers, cookies, body: this.body };
  }
}

function successPage(where: string): string {
  return page(
    'Installed',
    `The app is installed in ${escapeHtml(where)}. In a channel: <code>/invite @AI Visibility</code>, then <code>/visibility subscribe &lt;project&gt;</code>.`,
  );
}

function failurePage(code: string): string {
  return page('Not installed', `The install did not complete (${escapeHtml(code)}). Start again from the Add to Slack page.`);
}

function page(title: string, text: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

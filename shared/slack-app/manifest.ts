/**
 * The Slack app manifest for `bridge slack manifest` (paste it at api.slack.com/apps → Create New
 * App → From an app manifest). Scopes, each needed and nothing more:
 * - `commands`: the `/visibility` slash command;
 * - `chat:write`: post digests and their thread replies in channels the app was invited to;
 * - `metadata.message:read`: Slack's `message_metadata_posted` event for the bot's own posts (the
 *   metadata names the event id): after an attempt whose outcome is unknown, the digest worker learns
 *   from it what was already posted instead of posting twice, without reading the channel
 *   (shared/digest/posted-ledger.ts); the Events API also brings `app_uninstalled` / `tokens_revoked`;
 * - `channels:history` instead (`postRecovery: 'history'`, a single-workspace deploy's default
 *   `slackPostRecovery`): the worker reads the channel (conversations.history / replies) for the same;
 * - `channels:read`: `subscribe` checks the bot is in the channel (conversations.info) before
 *   subscribing it, and says how to invite it when not (`bridge doctor` checks channels with it too);
 * - `usergroups:read`: a `slackAccess` policy that lets a user group change subscriptions reads its
 *   members (usergroups.users.list);
 * - `groups:read` (only with `privateChannels`), and `groups:history` with the history look-up: the same
 *   for private channels.
 * - `files:write` (only with `pngFallback`): the PNG trend chart uploaded into a digest's thread when
 *   Slack refuses its native chart (the stage's `chartsEnabled`). Slack draws the chart with `chat:write`.
 * `distributed`: installed in many workspaces through "Add to Slack" (OAuth v2): the redirect URL, token
 * rotation (the bridge refreshes each installation's token, shared/installations) and org-wide installs.
 * Not requested: `chat:write.public` (the app must be invited, which keeps channels in control).
 * The Home tab is on and the app subscribes to the bot events of `SLACK_EVENTS` (`app_home_opened`,
 * which needs no scope) at `<base>/slack/events`; `views.publish` needs no scope either.
 */
import { HTTP_PATHS, SLACK_APP_DEFAULTS, type PostRecovery } from '../contracts';
import { usageHint } from './commands';
import { slackBotEvents } from './events';

export interface ManifestOptions {
  /** Base URL of the bridge's API (the stack's API URL, or the local gateway). */
  baseUrl: string;
  appName?: string | undefined;
  privateChannels?: boolean | undefined;
  /** The stage uploads the PNG chart when Slack refuses the native one (`chartsEnabled`): adds `files:write`. */
  pngFallback?: boolean | undefined;
  /** How the digest recovers after an unknown post outcome (the stage's `slackPostRecovery`); default 'history', 'ledger' when distributed. */
  postRecovery?: PostRecovery | undefined;
  /** Installed through "Add to Slack" in many workspaces (OAuth v2, token rotation, org-wide installs). */
  distributed?: boolean | undefined;
}

export interface SlackAppManifest {
  display_information: { name: string; description: string };
  features: {
    bot_user: { display_name: string; always_online: boolean };
    slash_commands: { command: string; url: string; description: string; usage_hint: string; should_escape: boolean }[];
    /** The Home tab shows the portfolio (the Messages tab is left as Slack has it). */
    app_home: { home_tab_enabled: boolean };
  };
  oauth_config: { scopes: { bot: string[] }; redirect_urls?: string[] };
  settings: {
    interactivity: { is_enabled: boolean; request_url: string };
    event_subscriptions: { request_url: string; bot_events: string[] };
    org_deploy_enabled: boolean;
    socket_mode_enabled: boolean;
    token_rotation_enabled: boolean;
  };
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Slack limits app and bot display names to 35 characters. */
const MAX_NAME = 35;

export function buildSlackAppManifest(options: ManifestOptions): SlackAppManifest {
  const base = requestBase(options.baseUrl);
  const appName = (options.appName?.trim() || 'AI Visibility').slice(0, MAX_NAME);
  const scopes = botScopes(options);
  const events = botEvents(options);
  return {
    display_information: { name: appName, description: 'AI-visibility digests and /visibility subscriptions' },
    features: {
      bot_user: { display_name: appName, always_online: false },
      slash_commands: [
        {
          command: SLACK_APP_DEFAULTS.command,
          url: `${base}${HTTP_PATHS.slackCommands}`,
          description: 'Subscribe this channel to AI-visibility digests',
          usage_hint: usageHint(),
          // Raw text: project names are matched as typed, not as Slack's <#C…|…> escapes.
          should_escape: false,
        },
      ],
      app_home: { home_tab_enabled: true },
    },
    oauth_config: {
      scopes: { bot: scopes },
      ...(options.distributed ? { redirect_urls: [`${base}${HTTP_PATHS.slackOAuthRedirect}`] } : {}),
    },
    settings: {
      interactivity: { is_enabled: true, request_url: `${base}${HTTP_PATHS.slackInteractions}` },
      event_subscriptions: { request_url: `${base}${HTTP_PATHS.slackEvents}`, bot_events: events },
      org_deploy_enabled: options.distributed === true,
      socket_mode_enabled: false,
      // A single-workspace token lives in Secrets Manager and is never refreshed: rotation only with installs.
      token_rotation_enabled: options.distributed === true,
    },
  };
}

/** The bot scopes the app asks for (also what "Add to Slack" requests). */
export function botScopes(options: Pick<ManifestOptions, 'privateChannels' | 'postRecovery' | 'pngFallback' | 'distributed'>): string[] {
  const history = recoveryOf(options) === 'history';
  return [
    'commands',
    'chat:write',
    // The PNG fallback of the trend chart is uploaded into the thread (files.getUploadURLExternal + completeUploadExternal).
    ...(options.pngFallback === true ? ['files:write'] : []),
    history ? 'channels:history' : 'metadata.message:read',
    'channels:read',
    'usergroups:read',
    ...(options.privateChannels ? [...(history ? ['groups:history'] : []), 'groups:read'] : []),
  ];
}

/**
 * The Events API events the app subscribes to: those of `SLACK_EVENTS` whose condition holds (App Home
 * always, its own posts' metadata with the posted ledger, uninstalls when distributed).
 */
function botEvents(options: Pick<ManifestOptions, 'postRecovery' | 'distributed'>): string[] {
  return slackBotEvents({ postRecovery: recoveryOf(options), distributed: options.distributed === true });
}

/**
 * How the stage learns what an unknown post outcome posted: as set, else by reading history in a single
 * workspace (unchanged deploys) and from the posted ledger when distributed (history is rate-limited there).
 */
function recoveryOf(options: Pick<ManifestOptions, 'postRecovery' | 'distributed'>): PostRecovery {
  return options.postRecovery ?? (options.distributed === true ? 'ledger' : 'history');
}

/** The base URL without a trailing slash; Slack only calls https (plain http is accepted for local hosts). */
function requestBase(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new Error(`"${baseUrl}" is not a URL: give the bridge's API base URL, e.g. https://abc123.execute-api.eu-west-1.amazonaws.com`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname))) {
    throw new Error(`Slack only sends requests to https URLs: "${baseUrl}" must start with https:// (http is accepted for localhost only)`);
  }
  if (url.search || url.hash) throw new Error(`the API base URL "${baseUrl}" must not have a query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

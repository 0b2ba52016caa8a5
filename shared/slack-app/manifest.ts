/**
 * The Slack app manifest for `bridge slack manifest` (paste it at api.slack.com/apps → Create New
 * App → From an app manifest). Scopes, each needed and nothing more:
 * - `commands`: the `/visibility` slash command;
 * - `chat:write`: post digests and their thread replies in channels the app was invited to;
 * - `channels:history`: after an attempt whose outcome is unknown, the digest worker reads the
 *   channel (conversations.history / replies) to find what was already posted instead of posting twice;
 * - `channels:read`: `subscribe` checks the bot is in the channel (conversations.info) before
 *   subscribing it, and says how to invite it when not (`bridge doctor` checks channels with it too);
 * - `usergroups:read`: a `slackAccess` policy that lets a user group change subscriptions reads its
 *   members (usergroups.users.list);
 * - `groups:history`, `groups:read` (only with `privateChannels`): the same for private channels;
 * - `files:write` (only with `pngFallback`): the PNG trend chart uploaded into a digest's thread when
 *   Slack refuses its native chart (the stage's `chartsEnabled`). Slack draws the chart with `chat:write`.
 * Not requested: `chat:write.public` (the app must be invited, which keeps channels in control).
 * The Home tab is on and the app subscribes to the bot events of `SLACK_EVENTS` (`app_home_opened`,
 * which needs no scope) at `<base>/slack/events`; `views.publish` needs no scope either.
 */
import { HTTP_PATHS, SLACK_APP_DEFAULTS } from '../contracts';
import { usageHint } from './commands';
import { SLACK_BOT_EVENTS, type SlackEventType } from './events';

export interface ManifestOptions {
  /** Base URL of the bridge's API (the stack's API URL, or the local gateway). */
  baseUrl: string;
  appName?: string | undefined;
  privateChannels?: boolean | undefined;
  /** The stage uploads the PNG chart when Slack refuses the native one (`chartsEnabled`): adds `files:write`. */
  pngFallback?: boolean | undefined;
}

export interface SlackAppManifest {
  display_information: { name: string; description: string };
  features: {
    bot_user: { display_name: string; always_online: boolean };
    slash_commands: { command: string; url: string; description: string; usage_hint: string; should_escape: boolean }[];
    /** The Home tab shows the portfolio (the Messages tab is left as Slack has it). */
    app_home: { home_tab_enabled: boolean };
  };
  oauth_config: { scopes: { bot: string[] } };
  settings: {
    interactivity: { is_enabled: boolean; request_url: string };
    event_subscriptions: { request_url: string; bot_events: SlackEventType[] };
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
  const scopes = [
    'commands',
    'chat:write',
    // The PNG fallback of the trend chart is uploaded into the thread (files.getUploadURLExternal + completeUploadExternal).
    ...(options.pngFallback === true ? ['files:write'] : []),
    'channels:history',
    'channels:read',
    'usergroups:read',
    ...(options.privateChannels ? ['groups:history', 'groups:read'] : []),
  ];
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
    oauth_config: { scopes: { bot: scopes } },
    settings: {
      interactivity: { is_enabled: true, request_url: `${base}${HTTP_PATHS.slackInteractions}` },
      event_subscriptions: { request_url: `${base}${HTTP_PATHS.slackEvents}`, bot_events: [...SLACK_BOT_EVENTS] },
      org_deploy_enabled: false,
      socket_mode_enabled: false,
      token_rotation_enabled: false,
    },
  };
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

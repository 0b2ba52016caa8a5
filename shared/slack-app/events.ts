/**
 * Slack's Events API envelope (`POST /slack/events`, JSON), parsed once into a typed union:
 * `url_verification` (Slack checks the request URL: its `challenge` is echoed), an `event_callback`
 * of a type the bridge handles (its event parsed by the type's entry in `SLACK_EVENTS`), or one of any
 * other type (acknowledged and ignored). The event types live in `SLACK_EVENTS` alone: the manifest's
 * bot events are its keys (each under its entry's condition), and a type added to `SlackEventArgs`
 * fails `tsc` until it has its entry.
 */
import type { PostRecovery } from '../contracts';
import { postedKeyOf, type MessageMetadataPosted } from '../digest/posted-ledger';
import type { InstallationRef } from '../installations/model';
import type { RevokedTokens } from '../installations/uninstall';
import { isRecord, parseJsonOrUndefined } from '../util';
import type { RequestOrigin } from './workspace-gate';

/** What each handled event type parses into. */
export interface SlackEventArgs {
  /** A user opened one of the app's tabs (`home` or `messages`). */
  app_home_opened: { userId: string; tab: string };
  /** A message with metadata was posted: the posted ledger learns the bot's own (shared/digest/posted-ledger.ts). */
  message_metadata_posted: MessageMetadataPosted;
  /** The app was removed from a workspace (or an org). */
  app_uninstalled: { installation: InstallationRef };
  /** Tokens of the app were revoked in a workspace: the bot's ones purge it like an uninstall. */
  tokens_revoked: { installation: InstallationRef; tokens: RevokedTokens };
}
export type SlackEventType = keyof SlackEventArgs;

export type SlackEvent = { [T in SlackEventType]: { type: T } & SlackEventArgs[T] }[SlackEventType];

export interface SlackEventSpec<T extends SlackEventType> {
  /** Why the app subscribes to it (the manifest's comment, docs/SLACK-APP.md). */
  why: string;
  /** Whether an app so configured subscribes to it; absent: every app does. */
  subscribed?: (app: EventSubscriber) => boolean;
  /**
   * It may arrive after its workspace's installation is deleted (the other of the uninstall pair, or a
   * retry): a distributed stage's gate serves it for our app whatever the workspace, since it only
   * purges that workspace's own data.
   */
  afterUninstall?: true;
  /** The event's fields (the envelope carries the team an event is about), or what is missing. */
  parse(event: Record<string, unknown>, envelope: Record<string, unknown>): SlackEventArgs[T] | string;
}

/** What decides the events an app subscribes to (the manifest's options). */
export interface EventSubscriber {
  postRecovery: PostRecovery;
  distributed: boolean;
}

export const SLACK_EVENTS: { readonly [T in SlackEventType]: SlackEventSpec<T> } = {
  app_home_opened: {
    why: 'the Home tab shows the portfolio of every project, published when it is opened',
    parse: (event) => {
      const { user, tab } = event;
      if (typeof user !== 'string' || user === '') return 'app_home_opened event lacks its user';
      return { userId: user, tab: typeof tab === 'string' ? tab : 'home' };
    },
  },
  message_metadata_posted: {
    why: "the posted ledger learns the ts of the bot's own posts whose outcome was unknown (needs metadata.message:read)",
    subscribed: (app) => app.postRecovery === 'ledger',
    parse: (event) => {
      const channelId = text(event['channel_id']);
      const messageTs = text(event['message_ts']);
      if (channelId === undefined || messageTs === undefined) return 'message_metadata_posted event lacks channel_id or message_ts';
      return { appId: text(event['app_id']), channelId, messageTs, posted: postedKeyOf(event['metadata']) };
    },
  },
  app_uninstalled: {
    why: 'a workspace removed the app: its installation and what its members set up are purged',
    subscribed: (app) => app.distributed,
    afterUninstall: true,
    parse: (_event, envelope) => installationOf(envelope, 'app_uninstalled'),
  },
  tokens_revoked: {
    why: "a workspace revoked the bot's token: purged like an uninstall",
    subscribed: (app) => app.distributed,
    afterUninstall: true,
    parse: (event, envelope) => {
      const installation = installationOf(envelope, 'tokens_revoked');
      if (typeof installation === 'string') return installation;
      const tokens = isRecord(event['tokens']) ? event['tokens'] : {};
      return { ...installation, tokens: { oauth: textList(tokens['oauth']), bot: textList(tokens['bot']) } };
    },
  },
};

/** The bot events an app so configured subscribes to: handled types only. */
export function slackBotEvents(app: EventSubscriber): SlackEventType[] {
  return (Object.keys(SLACK_EVENTS) as SlackEventType[]).filter((type) => SLACK_EVENTS[type].subscribed?.(app) ?? true);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function textList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The installation an uninstall names: the envelope's team (or org, for an org-wide install). */
function installationOf(envelope: Record<string, unknown>, type: string): { installation: InstallationRef } | string {
  const teamId = text(envelope['team_id']);
  const enterpriseId = text(envelope['enterprise_id']);
  const isEnterpriseInstall = envelope['is_enterprise_install'] === true;
  if (isEnterpriseInstall ? enterpriseId === undefined : teamId === undefined) return `${type} event lacks the team (or org) it is about`;
  return { installation: { teamId, enterpriseId, isEnterpriseInstall } };
}

export type SlackEventEnvelope =
  | { kind: 'url_verification'; challenge: string }
  /** An event of a handled type. `eventId` is Slack's, the same on every retry of it. */
  | { kind: 'event'; eventId: string; origin: RequestOrigin; event: SlackEvent }
  /** An event of a type the bridge does not handle: answered 200 and ignored. */
  | { kind: 'unhandled'; eventId: string; origin: RequestOrigin; type: string };

export type EnvelopeParse = { ok: true; envelope: SlackEventEnvelope } | { ok: false; problem: string };

export function parseEventEnvelope(rawBody: string): EnvelopeParse {
  const body = parseJsonOrUndefined(rawBody);
  if (!isRecord(body)) return { ok: false, problem: 'event body is not a JSON object' };
  if (body['type'] === 'url_verification') {
    const challenge = body['challenge'];
    return typeof challenge === 'string' && challenge !== ''
      ? { ok: true, envelope: { kind: 'url_verification', challenge } }
      : { ok: false, problem: 'url_verification lacks its challenge' };
  }
  if (body['type'] !== 'event_callback')
    return { ok: false, problem: `envelope type "${String(body['type']).slice(0, 40)}" is not handled` };
  const eventId = body['event_id'];
  const event = body['event'];
  if (typeof eventId !== 'string' || eventId === '' || !isRecord(event))
    return { ok: false, problem: 'event_callback lacks event_id or event' };
  const origin = originOf(body);
  const type = typeof event['type'] === 'string' ? event['type'] : '';
  if (!isHandled(type)) return { ok: true, envelope: { kind: 'unhandled', eventId, origin, type: type.slice(0, 60) } };
  const parsed = parseEvent(type, event, body);
  return typeof parsed === 'string'
    ? { ok: false, problem: parsed }
    : { ok: true, envelope: { kind: 'event', eventId, origin, event: parsed } };
}

function isHandled(type: string): type is SlackEventType {
  return Object.hasOwn(SLACK_EVENTS, type);
}

function parseEvent(type: SlackEventType, event: Record<string, unknown>, envelope: Record<string, unknown>): SlackEvent | string {
  const args = SLACK_EVENTS[type].parse(event, envelope);
  return typeof args === 'string' ? args : ({ type, ...args } as SlackEvent);
}

/** The ids an event envelope carries, for the workspace gate: its team, org and app. */
function originOf(body: Record<string, unknown>): RequestOrigin {
  const team = text(body['team_id']);
  return { teamIds: team === undefined ? [] : [team], enterpriseId: text(body['enterprise_id']), appId: text(body['api_app_id']) };
}

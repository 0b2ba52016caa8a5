/**
 * Slack's Events API envelope (`POST /slack/events`, JSON), parsed once into a typed union:
 * `url_verification` (Slack checks the request URL: its `challenge` is echoed), an `event_callback`
 * of a type the bridge handles (its event parsed by the type's entry in `SLACK_EVENTS`), or one of any
 * other type (acknowledged and ignored). The event types live in `SLACK_EVENTS` alone: the manifest's
 * bot events are its keys, and a type added to `SlackEventArgs` fails `tsc` until it has its entry.
 */
import { isRecord, parseJsonOrUndefined } from '../util';
import type { RequestOrigin } from './workspace-gate';

/** What each handled event type parses into. */
export interface SlackEventArgs {
  /** A user opened one of the app's tabs (`home` or `messages`). */
  app_home_opened: { userId: string; tab: string };
}
export type SlackEventType = keyof SlackEventArgs;

export type SlackEvent = { [T in SlackEventType]: { type: T } & SlackEventArgs[T] }[SlackEventType];

export interface SlackEventSpec<T extends SlackEventType> {
  /** Why the app subscribes to it (the manifest's comment, docs/SLACK-APP.md). */
  why: string;
  /** The event's fields, or what is missing. */
  parse(event: Record<string, unknown>): SlackEventArgs[T] | string;
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
};

/** The bot events the manifest subscribes to: every handled type, nothing more. */
export const SLACK_BOT_EVENTS = Object.keys(SLACK_EVENTS) as SlackEventType[];

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
  const parsed = parseEvent(type, event);
  return typeof parsed === 'string'
    ? { ok: false, problem: parsed }
    : { ok: true, envelope: { kind: 'event', eventId, origin, event: parsed } };
}

function isHandled(type: string): type is SlackEventType {
  return Object.hasOwn(SLACK_EVENTS, type);
}

function parseEvent(type: SlackEventType, event: Record<string, unknown>): SlackEvent | string {
  const args = SLACK_EVENTS[type].parse(event);
  return typeof args === 'string' ? args : { type, ...args };
}

/** The ids an event envelope carries, for the workspace gate: its team, org and app. */
function originOf(body: Record<string, unknown>): RequestOrigin {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const team = text(body['team_id']);
  return { teamIds: team === undefined ? [] : [team], enterpriseId: text(body['enterprise_id']), appId: text(body['api_app_id']) };
}

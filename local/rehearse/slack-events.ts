/**
 * The rehearsal's scenario for `POST /slack/events` (App Home), through the real bundle and the
 * template's wiring: Slack's URL check echoed; an opened Home tab published by the digest function
 * (`views.publish` on the local Slack server, as Slack would receive it); a signed event from another
 * workspace refused (403, nothing published); and Slack's retry of an event already acted on (the
 * same event id, re-signed) answered but not published twice.
 */
import { randomBytes } from 'node:crypto';
import type { ScenarioContext } from './scenario-context';

const USER = 'U0HOMEREHEARSE';
const FOREIGN_USER = 'U0HOMEFOREIGN';

/** An Events API delivery of `event` from the team, for the stage's app, as Slack wraps it (`event_ts` added). */
export function eventCallback(
  context: ScenarioContext,
  event: Record<string, unknown>,
  eventId = `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
  teamId = context.stack.peers.slack.teamId,
): string {
  const identity = context.stack.slackIdentity;
  const now = Math.floor(Date.now() / 1000);
  return JSON.stringify({
    token: 'unused',
    team_id: teamId,
    ...(identity.enterpriseId !== undefined ? { enterprise_id: identity.enterpriseId } : {}),
    api_app_id: context.stack.peers.slack.appId,
    event: { ...event, event_ts: `${now}.000100` },
    type: 'event_callback',
    event_id: eventId,
    event_time: now,
  });
}

function homeOpened(context: ScenarioContext, eventId: string, user: string, teamId?: string): string {
  return eventCallback(context, { type: 'app_home_opened', user, channel: `D${user}`, tab: 'home' }, eventId, teamId);
}

export async function slackEventsScenario(context: ScenarioContext): Promise<void> {
  const url = context.outputs['SlackEventsUrl'];
  if (url === undefined) throw new Error('the stack has no SlackEventsUrl output');
  const challenge = `rehearsal-${randomBytes(4).toString('hex')}`;
  const check = await context.slackRequest(url, JSON.stringify({ type: 'url_verification', token: 'unused', challenge }));
  context.record(
    'events: Slack’s URL check is answered with its challenge',
    check.status === 200 && check.text.includes(challenge),
    `HTTP ${check.status} ${check.text.slice(0, 80)}`,
  );

  const eventId = `Ev${randomBytes(5).toString('hex').toUpperCase()}`;
  const body = homeOpened(context, eventId, USER);
  const firstAt = Math.floor(Date.now() / 1000) - 30;
  const opened = await context.slackRequest(url, body, undefined, firstAt);
  const slack = context.stack.peers.slack;
  const published = await context.waitFor('the Home tab published', () => slack.homeView(USER), 60_000);
  context.record(
    'events: app_home_opened publishes the Home portfolio (views.publish)',
    opened.status === 200 && published.view.type === 'home' && published.view.blocks.length <= 100,
    `HTTP ${opened.status}, ${published.view.blocks.length} blocks`,
  );

  const foreign = await context.slackRequest(url, homeOpened(context, `${eventId}F`, FOREIGN_USER, 'T0OTHERTEAM'));
  const retry = await context.slackRequest(url, body);
  await context.stack.settle(10_000);
  context.record(
    'events: a signed event from another workspace is refused (403)',
    foreign.status === 403 && slack.homeView(FOREIGN_USER) === undefined,
    `HTTP ${foreign.status}`,
  );
  context.record(
    'events: Slack’s retry of the same event (re-signed) is answered, not published again',
    retry.status === 200 && slack.homeView(USER)?.version === 1,
    `HTTP ${retry.status}, publishes: ${slack.homeView(USER)?.version ?? 0}`,
  );
}

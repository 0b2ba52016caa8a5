/**
 * What the endpoint does with a verified Events API event and with a click on the Home tab: each is
 * acted on once, then answered at once. A bot's own message metadata goes to the posted ledger, an
 * uninstall (or a revoked bot token) purges the team; both only where the stage keeps them (undefined
 * otherwise: the manifest does not subscribe such a stage to them, and a stray one is ignored). Building the portfolio reads every project (the read API, the
 * table), which does not fit Slack's 3 s, so the publish goes on the commands queue as a `slack_home`
 * message, answered by the digest function (./home/publish.ts) like a deferred command.
 */
import { createHash } from 'node:crypto';
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import { describeError } from '../observability';
import { onMessageMetadataPosted } from '../digest/posted-ledger';
import type { InstallationStore, TeamData } from '../installations/ports';
import { onAppUninstalled, onTokensRevoked } from '../installations/uninstall';
import type { Clock, Log, PostedLedger } from '../ports';
import type { Tenant } from '../tenancy';
import type { SlackEvent, SlackEventEnvelope } from './events';
import type { HomeAction } from './home/actions';
import type { HomeRequest } from './home/ports';
import type { DeferredCommandQueue, ReplayGuard, SignedRequestId, SlackTeam, TeamTenants } from './ports';
import type { RequestOrigin } from './workspace-gate';

export interface EventDeps {
  /** Each tenant's posted ledger, on a stage whose `slackPostRecovery` is `ledger`. */
  postedLedger: ((tenant: Tenant) => PostedLedger) | undefined;
  /** Installations and what teams keep, on a stage installed through "Add to Slack". */
  installations: { store: InstallationStore; teamData: TeamData } | undefined;
  replays: ReplayGuard;
  queue: DeferredCommandQueue;
  /** Which tenants a workspace's Home tab shows (./tenant-scope.ts); none = the stack's, to every workspace. */
  tenants?: TeamTenants | undefined;
  clock: Clock;
  log: Log;
}

/** acted: queued (or nothing to do); retried: Slack's retry of an event already acted on; store_unavailable: the guard could not say. */
export type EventOutcome = 'acted' | 'ignored' | 'retried' | 'store_unavailable';

/** Types already logged as ignored, so a chatty subscription logs each once per container. */
const loggedUnhandled = new Set<string>();
const MAX_LOGGED_UNHANDLED = 50;

export async function answerEvent(
  envelope: Exclude<SlackEventEnvelope, { kind: 'url_verification' }>,
  signed: SignedRequestId,
  deps: EventDeps,
): Promise<EventOutcome> {
  if (envelope.kind === 'unhandled') {
    logUnhandledOnce(envelope.type, deps.log);
    return 'ignored';
  }
  // Slack retries an event with a new timestamp and signature: its event id is what stays the same.
  try {
    if (!(await deps.replays.firstSeen({ mac: eventKey(envelope.eventId), timestampSeconds: signed.timestampSeconds }, deps.clock.now())))
      return 'retried';
  } catch (error) {
    deps.log.error('replay guard failed: the Slack event was not acted on', describeError(error));
    return 'store_unavailable';
  }
  try {
    return await act(envelope.event, envelope.origin, deps);
  } catch (error) {
    // Already marked as seen: Slack's retry would be answered, not acted on. Each action is idempotent, so ops may replay it.
    deps.log.error('Slack event could not be acted on', { type: envelope.event.type, eventId: envelope.eventId, ...describeError(error) });
    return 'store_unavailable';
  }
}

/** The event's action. `appId` is the app the request was for (the workspace gate checked it is ours). */
async function act(event: SlackEvent, origin: RequestOrigin, deps: EventDeps): Promise<EventOutcome> {
  const appId = origin.appId;
  switch (event.type) {
    case 'app_home_opened': {
      if (event.tab !== 'home') return 'ignored';
      const [teamId] = origin.teamIds;
      const team = teamId === undefined ? undefined : { teamId, enterpriseId: origin.enterpriseId };
      await queueHome({ kind: QUEUE_MESSAGE_KINDS.slackHome, userId: event.userId, page: 0, receivedAtMs: deps.clock.now() }, team, deps);
      return 'acted';
    }
    case 'message_metadata_posted':
      if (deps.postedLedger === undefined) return unkept(event.type, deps.log);
      return (await onMessageMetadataPosted(event, { ledgerOf: deps.postedLedger, appId, log: deps.log })) === 'recorded'
        ? 'acted'
        : 'ignored';
    case 'app_uninstalled':
      if (deps.installations === undefined) return unkept(event.type, deps.log);
      return (await onAppUninstalled(event.installation, { ...deps.installations, log: deps.log })) === 'ignored' ? 'ignored' : 'acted';
    case 'tokens_revoked':
      if (deps.installations === undefined) return unkept(event.type, deps.log);
      return (await onTokensRevoked(event.installation, event.tokens, { ...deps.installations, log: deps.log })) === 'ignored'
        ? 'ignored'
        : 'acted';
  }
}

/** An event the stage does not keep what it is about for (not subscribed by its manifest): ignored. */
function unkept(type: string, log: Log): EventOutcome {
  logUnhandledOnce(type, log);
  return 'ignored';
}

/** A page button re-publishes that page; a channel picked subscribes it and re-publishes the page it was picked on. */
export async function answerHomeAction(action: HomeAction, deps: EventDeps): Promise<void> {
  if (action.kind === 'open_digest') return;
  const base = { kind: QUEUE_MESSAGE_KINDS.slackHome, userId: action.userId, page: action.page, receivedAtMs: deps.clock.now() };
  const request = action.kind === 'page' ? base : { ...base, subscribe: { projectId: action.projectId, channel: action.channel } };
  await queueHome(request, action.team, deps);
}

/**
 * The replay guard's key of an event, apart from request MACs: a digest of the event id (hex, like a
 * MAC), kept while the delivery that first carried it verifies; Slack's retries come within that.
 */
export function eventKey(eventId: string): string {
  return createHash('sha256').update(`slack-event:${eventId}`).digest('hex');
}

/** Queued, or logged: Slack shows nothing for a lost publish, and the next open of the tab publishes again. */
async function queueHome(request: HomeRequest, team: SlackTeam | undefined, deps: EventDeps): Promise<void> {
  try {
    // Scoped: the workspace's tenants travel with the request (none without a team: the tab is then empty).
    const tenants = deps.tenants === undefined ? undefined : await deps.tenants.of(team ?? { teamId: '' });
    await deps.queue.send(tenants === undefined ? request : { ...request, tenants });
  } catch (error) {
    deps.log.error('App Home publish could not be queued', { user: request.userId, ...describeError(error) });
  }
}

function logUnhandledOnce(type: string, log: Log): void {
  if (loggedUnhandled.has(type) || loggedUnhandled.size >= MAX_LOGGED_UNHANDLED) return;
  loggedUnhandled.add(type);
  log.info('Slack event of a type the bridge does not handle: acknowledged, ignored', { type });
}

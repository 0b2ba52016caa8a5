/**
 * The Slack endpoints: `POST /slack/commands`, `POST /slack/interactions` and `POST /slack/events`
 * (App Home, ./slack-events.ts). The signature is
 * checked first, over the raw bytes; nothing is read or written before it passes. Then the request
 * must come from our workspace (or Grid org) and be for our app (./workspace-gate.ts: 403 otherwise),
 * and its MAC must not have been acted on already (a replay, however its signature is spelled, is
 * answered, not acted on again).
 * Then, within Slack's 3 s: inline commands are answered in the HTTP body, deferred ones are put on
 * the commands queue and acknowledged ephemerally, button clicks (their values signed by the bridge,
 * ../buttons/value.ts) change the store and update the message via response_url. Never throws: every
 * failure is an outcome, mapped to HTTP in one place.
 */
import { HTTP_PATHS, METRIC_DIMENSIONS, SLACK_APP_METRICS } from '../contracts';
import { describeError } from '../observability';
import type { Clock, Log, Metrics } from '../ports';
import {
  SLACK_SIGNATURE_HEADER,
  SLACK_TIMESTAMP_HEADER,
  type SlackRequestVerifier,
  type SlackSignatureFailure,
} from '../slack-request-signature';
import { handleButtonAction, type ActionDeps } from './actions';
import type { ActionValueCodec } from '../buttons/value';
import { parseSlashCommandForm } from './commands';
import { parseInteractionRequest, type ButtonRefusal } from './interactions';
import { SlackAppStoreError } from '../errors';
import type { TeamChannels } from '../installations/ports';
import type { ReplayGuard, SignedRequestId, SlackReply } from './ports';
import * as reply from './replies';
import { answerSlashCommand, type CommandAck } from './service';
import { answerEvent, answerHomeAction, type EventDeps, type EventOutcome } from './slack-events';
import {
  gateReason,
  requestOrigin,
  type ForeignReason,
  type InstalledTeams,
  type RequestOrigin,
  type WorkspaceAllowList,
} from './workspace-gate';
import { parseEventEnvelope, SLACK_EVENTS } from './events';

/** Interaction payloads carry the message's blocks (up to 50); 1 MiB is far above any real one and bounds the HMAC work. */
export const MAX_SLACK_BODY_BYTES = 1024 * 1024;

export interface SlackHttpRequest {
  method: string;
  /** Without the API stage prefix. */
  path: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  rawBody: Buffer;
}

export interface SlackHttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface SlackEndpointDeps extends ActionDeps, EventDeps {
  /** Resolves the verifier for the current signing secret (it may be regenerated while a container lives). */
  verifier: () => Promise<SlackRequestVerifier>;
  /** The workspaces (or Grid org) and the app this stage serves. */
  workspace: WorkspaceAllowList;
  /** A distributed stage's installations: the workspaces that installed the app are served too; none = the allow-list alone. */
  installedTeams?: InstalledTeams | undefined;
  /** Requests already acted on, by MAC (while they verify). */
  replays: ReplayGuard;
  /** Notes the channels a workspace runs commands in, on a stage installed through "Add to Slack" (its uninstall purges them). */
  teams: TeamChannels | undefined;
  /** Verifies the values of the bridge's buttons (the stage's action-signing key, through the secret cache). */
  actionValues: () => Promise<ActionValueCodec>;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

export type SlackRejection =
  | { kind: 'not_found' }
  | { kind: 'method_not_allowed' }
  | { kind: 'payload_too_large' }
  | { kind: 'signature'; reason: SlackSignatureFailure }
  /** Signed, but from another workspace, org or app, or while the stage names none. */
  | { kind: 'foreign'; reason: ForeignReason }
  | { kind: 'secrets_unavailable' }
  | { kind: 'bad_request'; problem: string }
  | { kind: 'store_unavailable' };

type Route = 'commands' | 'interactions' | 'events';

export type SlackOutcome =
  | { kind: 'reply'; reply: SlackReply }
  | { kind: 'acknowledged' }
  /** Slack's check of the events request URL: its challenge echoed. */
  | { kind: 'challenge'; challenge: string }
  /** Its signature was already acted on: answered (a command ephemerally), nothing done again. */
  | { kind: 'replayed'; route: Route }
  | { kind: 'rejected'; rejection: SlackRejection };

/** What a replayed command shows its user (Slack retried, or someone re-sent a captured request). */
export const ALREADY_HANDLED_TEXT = 'Already handled: this command was received before, so nothing was done again.';

/** The 403 codes of a foreign request: which id is not ours, or that the stage names none yet. */
const FOREIGN_ERRORS: Readonly<Record<ForeignReason, string>> = {
  not_configured: 'workspace_not_configured',
  team: 'foreign_workspace',
  enterprise: 'foreign_workspace',
  app: 'foreign_app',
};

/** The one place that maps outcomes to HTTP answers. Slack shows a non-2xx as an error, so 2xx carries the user-facing text. */
export function toSlackHttpResponse(outcome: SlackOutcome): SlackHttpResponse {
  const json = (statusCode: number, body: unknown): SlackHttpResponse => ({
    statusCode,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (outcome.kind === 'reply') return json(200, outcome.reply);
  if (outcome.kind === 'acknowledged') return { statusCode: 200, headers: {}, body: '' };
  if (outcome.kind === 'challenge') return json(200, { challenge: outcome.challenge });
  if (outcome.kind === 'replayed')
    return outcome.route === 'commands'
      ? json(200, { response_type: 'ephemeral', text: ALREADY_HANDLED_TEXT })
      : { statusCode: 200, headers: {}, body: '' };
  const r = outcome.rejection;
  switch (r.kind) {
    case 'not_found':
      return json(404, { ok: false, error: 'not_found' });
    case 'method_not_allowed':
      return { ...json(405, { ok: false, error: 'method_not_allowed' }), headers: { 'content-type': 'application/json', allow: 'POST' } };
    case 'payload_too_large':
      return json(413, { ok: false, error: 'payload_too_large' });
    case 'signature':
      return json(401, { ok: false, error: `signature_${r.reason}` });
    case 'foreign':
      return json(403, { ok: false, error: FOREIGN_ERRORS[r.reason] });
    case 'bad_request':
      return json(400, { ok: false, error: 'bad_request' });
    case 'secrets_unavailable':
    case 'store_unavailable':
      return json(503, { ok: false, error: r.kind });
  }
}

export async function handleSlackRequest(request: SlackHttpRequest, deps: SlackEndpointDeps): Promise<SlackHttpResponse> {
  const outcome = await slackOutcome(request, deps);
  if (outcome.kind === 'rejected') logRejection(outcome.rejection, request.path, deps);
  return toSlackHttpResponse(outcome);
}

async function slackOutcome(request: SlackHttpRequest, deps: SlackEndpointDeps): Promise<SlackOutcome> {
  const route = routeOf(request.path);
  if (route === undefined) return rejected({ kind: 'not_found' });
  if (request.method.toUpperCase() !== 'POST') return rejected({ kind: 'method_not_allowed' });
  if (request.rawBody.length > MAX_SLACK_BODY_BYTES) return rejected({ kind: 'payload_too_large' });
  const verified = await verify(request, deps);
  if ('kind' in verified) return rejected(verified);
  const form = request.rawBody.toString('utf8');
  if (route === 'events') return event(form, verified, request, deps);
  const refused = await gate(requestOrigin(request.path, form), deps);
  if (refused !== null) return rejected(refused);
  const replay = await checkReplay(verified, request.path, route, deps);
  if (replay !== null) return replay;
  return route === 'commands' ? command(form, deps) : interaction(form, deps);
}

/**
 * An Events API request: parsed once; `url_verification` is answered on its signature alone (it acts
 * on nothing and carries no workspace, and Slack sends it when the app is created, before the stage
 * names its workspace); an event passes the workspace gate and the replay guard like a command, then
 * is acted on once per Slack event id (Slack retries an event with a new signature).
 */
async function event(body: string, signed: SignedRequestId, request: SlackHttpRequest, deps: SlackEndpointDeps): Promise<SlackOutcome> {
  const parsed = parseEventEnvelope(body);
  if (!parsed.ok) return rejected({ kind: 'bad_request', problem: parsed.problem });
  const envelope = parsed.envelope;
  if (envelope.kind === 'url_verification') return { kind: 'challenge', challenge: envelope.challenge };
  const afterUninstall = envelope.kind === 'event' && SLACK_EVENTS[envelope.event.type].afterUninstall === true;
  const refused = await gate(envelope.origin, deps, afterUninstall);
  if (refused !== null) return rejected(refused);
  const replay = await checkReplay(signed, request.path, 'events', deps);
  if (replay !== null) return replay;
  return fromEventOutcome(await answerEvent(envelope, signed, deps), request, deps);
}

/** Null when the request's workspace is served (./workspace-gate.ts); a table that cannot say is a 503, never a guess. */
async function gate(origin: RequestOrigin, deps: SlackEndpointDeps, afterUninstall = false): Promise<SlackRejection | null> {
  try {
    const reason = await gateReason(origin, deps.workspace, deps.installedTeams, afterUninstall);
    return reason === null ? null : { kind: 'foreign', reason };
  } catch (error) {
    deps.log.error('installations could not be read: the Slack request was not acted on', describeError(error));
    return { kind: 'store_unavailable' };
  }
}

/** Slack's header on a retried event delivery (1, 2, 3). */
export const SLACK_RETRY_NUM_HEADER = 'x-slack-retry-num';

function fromEventOutcome(outcome: EventOutcome, request: SlackHttpRequest, deps: SlackEndpointDeps): SlackOutcome {
  if (outcome === 'store_unavailable') return rejected({ kind: 'store_unavailable' });
  if (outcome === 'retried') {
    deps.metrics.count(SLACK_APP_METRICS.slackRequestReplayed);
    deps.log.info('Slack event retried: answered, not acted on again', {
      path: request.path,
      retry: request.headers[SLACK_RETRY_NUM_HEADER] ?? 'none (a replay)',
    });
  }
  return { kind: 'acknowledged' };
}

/** Null for a first request; the outcome of a replay, or of a table that can't say (nothing done: Slack shows an error). */
async function checkReplay(signed: SignedRequestId, path: string, route: Route, deps: SlackEndpointDeps): Promise<SlackOutcome | null> {
  try {
    if (await deps.replays.firstSeen(signed, deps.clock.now())) return null;
  } catch (error) {
    deps.log.error('replay guard failed: the Slack request was not acted on', describeError(error));
    return rejected({ kind: 'store_unavailable' });
  }
  deps.metrics.count(SLACK_APP_METRICS.slackRequestReplayed);
  deps.log.warn('Slack request replayed: answered, not acted on again', { path });
  return { kind: 'replayed', route };
}

function routeOf(path: string): Route | undefined {
  if (path === HTTP_PATHS.slackCommands) return 'commands';
  if (path === HTTP_PATHS.slackInteractions) return 'interactions';
  if (path === HTTP_PATHS.slackEvents) return 'events';
  return undefined;
}

function rejected(rejection: SlackRejection): SlackOutcome {
  return { kind: 'rejected', rejection };
}

/** The request's MAC and timestamp when it is Slack's; otherwise why not. */
async function verify(request: SlackHttpRequest, deps: SlackEndpointDeps): Promise<SlackRejection | SignedRequestId> {
  let check: SlackRequestVerifier;
  try {
    check = await deps.verifier();
  } catch (error) {
    deps.log.error('Slack signing secret could not be read', describeError(error));
    return { kind: 'secrets_unavailable' };
  }
  const result = check({
    signature: request.headers[SLACK_SIGNATURE_HEADER],
    timestamp: request.headers[SLACK_TIMESTAMP_HEADER],
    rawBody: request.rawBody,
    nowSeconds: Math.floor(deps.clock.now() / 1000),
  });
  return result.ok ? { mac: result.mac, timestampSeconds: result.timestamp } : { kind: 'signature', reason: result.reason };
}

async function command(form: string, deps: SlackEndpointDeps): Promise<SlackOutcome> {
  const parsed = parseSlashCommandForm(form);
  if (!parsed.ok) return rejected({ kind: 'bad_request', problem: parsed.problem });
  await noteTeamChannel(parsed.request.teamId, parsed.request.channelId, deps);
  const ack = await answerSlashCommand(parsed.request, deps);
  if (ack.failure !== undefined) deps.log.error('subscription table failed on an inline command', describeError(ack.failure));
  if (ack.deferred === undefined) {
    deps.metrics.count(SLACK_APP_METRICS.slackCommandAnswered);
    return { kind: 'reply', reply: ack.reply };
  }
  return { kind: 'reply', reply: await enqueue(ack, deps) };
}

/** Before the command acts, so whatever it sets up is found by its workspace's uninstall; a failure is logged, the command still answered. */
async function noteTeamChannel(teamId: string, channel: string, deps: SlackEndpointDeps): Promise<void> {
  if (deps.teams === undefined || teamId === '') return;
  try {
    await deps.teams.note(teamId, channel);
  } catch (error) {
    deps.log.warn("the command's workspace could not be noted on its channel: its uninstall will not purge it", {
      teamId,
      channel,
      ...describeError(error),
    });
  }
}

/** Hands the deferred work to the queue; the acknowledgement says so, or that nothing was done. */
async function enqueue(ack: CommandAck, deps: SlackEndpointDeps): Promise<SlackReply> {
  if (ack.deferred === undefined) return ack.reply;
  try {
    await deps.queue.send(ack.deferred);
  } catch (error) {
    deps.log.error('deferred Slack command could not be queued', { command: ack.deferred.command.kind, ...describeError(error) });
    return reply.unavailableReply("The bridge's queue");
  }
  deps.metrics.count(SLACK_APP_METRICS.slackCommandDeferred);
  deps.log.info('Slack command deferred', { command: ack.deferred.command.kind, channel: ack.deferred.context.channel });
  return ack.reply;
}

async function interaction(form: string, deps: SlackEndpointDeps): Promise<SlackOutcome> {
  let codec: ActionValueCodec;
  try {
    codec = await deps.actionValues();
  } catch (error) {
    deps.log.error('action-signing key could not be read: the click was not acted on', describeError(error));
    return rejected({ kind: 'secrets_unavailable' });
  }
  const request = parseInteractionRequest(form, codec);
  if (request.kind === 'home') {
    await answerHomeAction(request.action, deps);
    deps.metrics.count(SLACK_APP_METRICS.slackActionHandled);
    return { kind: 'acknowledged' };
  }
  const parsed = request.parse;
  if (!parsed.ok && parsed.refusal !== undefined) return refuseButton(parsed.refusal, deps);
  if (!parsed.ok) return rejected({ kind: 'bad_request', problem: parsed.problem });
  const { action } = parsed.interaction;
  try {
    await handleButtonAction(parsed.interaction, deps);
  } catch (error) {
    // A store failure changed nothing: a non-2xx shows the user the click failed, so they click again.
    if (error instanceof SlackAppStoreError) {
      deps.log.error('subscription table failed on a button', { action: action.kind, ...describeError(error) });
      return rejected({ kind: 'store_unavailable' });
    }
    // The change is stored; only the message update failed. The click itself succeeded.
    deps.metrics.count(SLACK_APP_METRICS.slackResponseFailed);
    deps.log.warn('button handled but the message could not be updated', { action: action.kind, ...describeError(error) });
  }
  deps.metrics.count(SLACK_APP_METRICS.slackActionHandled);
  return { kind: 'acknowledged' };
}

/** What the clicker of a refused button is told, only them. */
export const BUTTON_REFUSED_TEXT =
  "This button can't be used here: it works only on the message the bridge posted, in the channel it was posted to (not on a copy). Use `/visibility` in that channel instead.";

/** A click on a value the bridge did not sign, or outside its channel: nothing changed, the clicker told (200: Slack shows no error). */
async function refuseButton(refusal: ButtonRefusal, deps: SlackEndpointDeps): Promise<SlackOutcome> {
  deps.metrics.count(SLACK_APP_METRICS.slackActionRefused, 1, { [METRIC_DIMENSIONS.reason]: refusal.reason });
  deps.log.warn('button refused', { action: refusal.actionId, reason: refusal.reason, user: refusal.actor.userId });
  try {
    await deps.responder.respond(refusal.responseUrl, { response_type: 'ephemeral', replace_original: false, text: BUTTON_REFUSED_TEXT });
  } catch (error) {
    deps.log.warn('the refused button could not be answered', describeError(error));
  }
  return { kind: 'acknowledged' };
}

function logRejection(rejection: SlackRejection, path: string, deps: SlackEndpointDeps): void {
  // Unauthenticated or foreign: one short line (path and reason; never headers or body), as a flood may send many.
  if (rejection.kind === 'signature') {
    deps.metrics.count(SLACK_APP_METRICS.slackRequestRejected, 1, { [METRIC_DIMENSIONS.reason]: `signature_${rejection.reason}` });
    deps.log.warn('Slack request refused', { path, reason: `signature_${rejection.reason}` });
    return;
  }
  if (rejection.kind === 'foreign') {
    deps.metrics.count(SLACK_APP_METRICS.slackRequestForeign, 1, { [METRIC_DIMENSIONS.reason]: rejection.reason });
    deps.log.warn('Slack request refused', { path, reason: `foreign_${rejection.reason}` });
    return;
  }
  const detail = rejection.kind === 'bad_request' ? { problem: rejection.problem } : {};
  deps.log.warn('Slack request refused', { path, reason: rejection.kind, ...detail });
}

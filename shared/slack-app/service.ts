/**
 * The `/visibility` command logic over ports. Slack wants an answer within 3 s, so:
 * - inline (DynamoDB only): help, list, unsubscribe, mute, unmute, mode — the project is found
 *   among the channel's own subscriptions, which keep the project's name;
 * - deferred (need the read API, whose latency is not bounded below 3 s: 429 + Retry-After):
 *   subscribe, status, projects — acknowledged at once, handed to the queue as a
 *   `DeferredSlackCommand`, and answered by the digest worker via response_url.
 */
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import type { Clock } from '../ports';
import { parseCommandText, type SlashCommandRequest, type VisibilityCommand } from './commands';
import { matchProject } from './project-match';
import type {
  Actor,
  ProjectDirectory,
  Responder,
  SettingsChange,
  SlackReply,
  StatusSource,
  Subscription,
  SubscriptionStore,
} from './ports';
import * as reply from './replies';
import { statusReply } from './status';

export interface CommandContext {
  channel: string;
  actor: Actor;
  responseUrl: string;
}

export type DeferredCommand = Extract<VisibilityCommand, { kind: 'subscribe' | 'status' | 'projects' }>;

/** Queue message body of a deferred command (`kind` tells it from a webhook event envelope). */
export interface DeferredSlackCommand {
  kind: typeof QUEUE_MESSAGE_KINDS.slackCommand;
  command: DeferredCommand;
  context: CommandContext;
  receivedAtMs: number;
}

export interface CommandAck {
  /** The HTTP body of the acknowledgement (JSON). */
  reply: SlackReply;
  /** Work to enqueue before acknowledging; absent when the reply is the whole answer. */
  deferred?: DeferredSlackCommand | undefined;
  /** The store failed: the reply says so; the caller logs and counts this. */
  failure?: unknown;
}

export interface InlineDeps {
  store: SubscriptionStore;
  clock: Clock;
}

export interface DeferredDeps extends InlineDeps {
  directory: ProjectDirectory;
  status: StatusSource;
  responder: Responder;
}

export function isDeferred(command: VisibilityCommand): command is DeferredCommand {
  return command.kind === 'subscribe' || command.kind === 'status' || command.kind === 'projects';
}

export async function answerSlashCommand(request: SlashCommandRequest, deps: InlineDeps): Promise<CommandAck> {
  const command = parseCommandText(request.text);
  const context: CommandContext = { channel: request.channelId, actor: actorOf(request), responseUrl: request.responseUrl };
  if (isDeferred(command)) {
    return {
      reply: reply.ephemeral(deferredAck(command)),
      deferred: { kind: QUEUE_MESSAGE_KINDS.slackCommand, command, context, receivedAtMs: deps.clock.now() },
    };
  }
  try {
    return { reply: await answerInline(command, context, deps) };
  } catch (failure) {
    return { reply: reply.unavailableReply("The bridge's subscription table"), failure };
  }
}

function actorOf(request: SlashCommandRequest): Actor {
  return { userId: request.userId, ...(request.userName ? { userName: request.userName } : {}) };
}

function deferredAck(command: DeferredCommand): string {
  if (command.kind === 'projects') return 'Asking the service for its projects…';
  return `Looking up "${command.project}"…`;
}

type InlineCommand = Exclude<VisibilityCommand, DeferredCommand>;

async function answerInline(command: InlineCommand, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  switch (command.kind) {
    case 'help':
      return reply.helpReply();
    case 'invalid':
      return reply.usageReply(command.verb, command.problem);
    case 'unknown':
      return reply.unknownReply(command.verb, command.suggestion);
    case 'list':
      return reply.listReply(await deps.store.forChannel(context.channel), deps.clock.now());
    case 'unsubscribe':
    case 'mute':
    case 'unmute':
    case 'mode':
      return changeSubscription(command, context, deps);
  }
}

type ChangeCommand = Extract<VisibilityCommand, { kind: 'unsubscribe' | 'mute' | 'unmute' | 'mode' }>;

async function changeSubscription(command: ChangeCommand, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  const subscriptions = await deps.store.forChannel(context.channel);
  const match = matchProject(command.project, subscriptions.map(asNamed));
  if (match.status === 'ambiguous') return reply.ambiguousReply(command.project, match.candidates);
  if (match.status === 'not_found') return reply.notFoundReply(command.project, match.suggestions, 'channel');
  const { subscription } = match.project;
  if (command.kind === 'unsubscribe') return unsubscribe(subscription, context, deps);
  const change = settingsChange(command, deps.clock.now());
  const changed = await deps.store.change(subscription.projectId, context.channel, change, context.actor, deps.clock.now());
  // Removed between the read and the write (someone unsubscribed meanwhile).
  if (changed === null) return reply.notFoundReply(command.project, [], 'channel');
  return reply.inChannel(changeAnnouncement(changed, context.actor, change));
}

function asNamed(subscription: Subscription) {
  return { id: subscription.projectId, name: subscription.projectName, subscription };
}

async function unsubscribe(subscription: Subscription, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  await deps.store.unsubscribe(subscription.projectId, context.channel);
  return reply.inChannel(`${reply.mention(context.actor.userId)} unsubscribed this channel from ${reply.name(asNamed(subscription))}.`);
}

export function settingsChange(command: Extract<ChangeCommand, { kind: 'mute' | 'unmute' | 'mode' }>, nowMs: number): SettingsChange {
  if (command.kind === 'mute') return { kind: 'mute', untilMs: nowMs + command.durationMs, label: command.durationLabel };
  if (command.kind === 'unmute') return { kind: 'unmute' };
  return { kind: 'mode', mode: command.mode };
}

/** One line saying who changed what, e.g. "🔕 @ana muted *Northwind* here for 7d (until …)". */
export function changeAnnouncement(subscription: Subscription, actor: Actor, change: SettingsChange): string {
  const who = reply.mention(actor.userId);
  const project = reply.name(asNamed(subscription));
  switch (change.kind) {
    case 'mute':
      return `🔕 ${who} muted ${project} here for ${change.label} (until ${reply.slackDate(change.untilMs)}). \`/visibility unmute ${subscription.projectName}\` ends it.`;
    case 'unmute':
      return `🔔 ${who} unmuted ${project} here: its digests are posted again.`;
    case 'mode':
      return change.mode === 'changes'
        ? `${who} set ${project} to *changes* here: a run where nothing moved gets one line. \`/visibility mode ${subscription.projectName} full\` undoes it.`
        : `${who} set ${project} to *full* here: every run gets the whole digest.`;
  }
}

/** Runs a deferred command in the digest worker and answers via response_url. Throws only when the answer can't be delivered. */
export async function runDeferredCommand(work: DeferredSlackCommand, deps: DeferredDeps): Promise<void> {
  let answer: SlackReply;
  try {
    answer = await answerDeferred(work.command, work.context, deps);
  } catch {
    // The read API or the table failed: say so now rather than retry past the user's attention span.
    answer = reply.unavailableReply("The visibility service's read API or the bridge's table");
  }
  await deps.responder.respond(work.context.responseUrl, answer);
}

async function answerDeferred(command: DeferredCommand, context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const projects = await deps.directory.listProjects();
  if (command.kind === 'projects') {
    const here = await deps.store.forChannel(context.channel);
    return reply.projectsReply(projects, new Set(here.map((s) => s.projectId)));
  }
  const match = matchProject(command.project, projects);
  if (match.status === 'ambiguous') return reply.ambiguousReply(command.project, match.candidates);
  if (match.status === 'not_found') return reply.notFoundReply(command.project, match.suggestions, 'service');
  if (command.kind === 'status') return statusReply(match.project, await deps.status.getVisibility(match.project.id), context.actor.userId);
  return subscribe(match.project, context, deps);
}

async function subscribe(project: { id: string; name: string }, context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const result = await deps.store.subscribe({
    projectId: project.id,
    projectName: project.name,
    channel: context.channel,
    actor: context.actor,
    nowMs: deps.clock.now(),
  });
  if (result.status === 'already') {
    return reply.ephemeral(
      `This channel is already subscribed to ${reply.name(project)} (${reply.settingsSummary(result.subscription, deps.clock.now())}).`,
    );
  }
  return reply.inChannel(
    `✅ ${reply.mention(context.actor.userId)} subscribed this channel to ${reply.name(project)}: its digests are posted here. ` +
      `\`/visibility mode ${project.name} changes\` keeps quiet runs to one line; \`/visibility mute ${project.name} 7d\` pauses them.`,
  );
}

/** Reads a queue message body as a deferred command; null when it is something else (e.g. a webhook event envelope). */
export function parseDeferredSlackCommand(body: unknown): DeferredSlackCommand | null {
  if (typeof body !== 'object' || body === null) return null;
  const candidate = body as Partial<DeferredSlackCommand>;
  if (candidate.kind !== QUEUE_MESSAGE_KINDS.slackCommand) return null;
  const { command, context } = candidate;
  if (typeof command !== 'object' || typeof context !== 'object') return null;
  if (typeof context.channel !== 'string' || typeof context.responseUrl !== 'string' || typeof context.actor?.userId !== 'string')
    return null;
  // Re-parse the command from its own fields so a malformed message can't smuggle an unchecked shape.
  const reparsed = parseCommandText(
    command.kind === 'projects' ? 'projects' : `${command.kind} ${typeof command.project === 'string' ? command.project : ''}`,
  );
  if (!isDeferred(reparsed)) return null;
  return { kind: QUEUE_MESSAGE_KINDS.slackCommand, command: reparsed, context, receivedAtMs: Number(candidate.receivedAtMs) || 0 };
}

/**
 * What each `/visibility` verb does, one handler per verb (the command table in ./commands.ts names
 * them). Inline handlers use DynamoDB only — the project is found among the channel's own
 * subscriptions, which keep the project's name; deferred ones also read the service's read API.
 */
import type { SettingsChange, Subscription } from '../ports';
import { matchProject } from './project-match';
import type { CommandContext, CommandOf, DeferredDeps, InlineDeps, SlackReply } from './ports';
import * as reply from './replies';
import { statusReply } from './status';

export function answerList(context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  return deps.store.forChannel(context.channel).then((subscriptions) => reply.listReply(subscriptions, deps.clock.now()));
}

type ChangeCommand = CommandOf<'unsubscribe' | 'mute' | 'unmute' | 'mode'>;

/** unsubscribe, mute, unmute, mode: the project is one of the channel's subscriptions. */
export async function changeSubscription(command: ChangeCommand, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
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
  return reply.inChannel(reply.changeAnnouncement(changed, context.actor, change));
}

function asNamed(subscription: Subscription) {
  return { id: subscription.projectId, name: subscription.projectName, subscription };
}

async function unsubscribe(subscription: Subscription, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  await deps.store.unsubscribe(subscription.projectId, context.channel);
  return reply.inChannel(`${reply.mention(context.actor.userId)} unsubscribed this channel from ${reply.name(asNamed(subscription))}.`);
}

export function settingsChange(command: CommandOf<'mute' | 'unmute' | 'mode'>, nowMs: number): SettingsChange {
  if (command.kind === 'mute') return { kind: 'mute', untilMs: nowMs + command.durationMs, label: command.durationLabel };
  if (command.kind === 'unmute') return { kind: 'unmute' };
  return { kind: 'mode', mode: command.mode };
}

export async function answerProjects(context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const projects = await deps.directory.listProjects();
  const here = await deps.store.forChannel(context.channel);
  return reply.projectsReply(projects, new Set(here.map((s) => s.projectId)));
}

/** The service's project the user named, or the reply saying why there is none. */
async function serviceProject(query: string, deps: DeferredDeps) {
  const match = matchProject(query, await deps.directory.listProjects());
  if (match.status === 'ambiguous') return { reply: reply.ambiguousReply(query, match.candidates) };
  if (match.status === 'not_found') return { reply: reply.notFoundReply(query, match.suggestions, 'service') };
  return { project: match.project };
}

export async function answerStatus(command: CommandOf<'status'>, context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const found = await serviceProject(command.project, deps);
  if (!found.project) return found.reply;
  return statusReply(found.project, await deps.status.getVisibility(found.project.id), context.actor.userId);
}

export async function answerSubscribe(command: CommandOf<'subscribe'>, context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const found = await serviceProject(command.project, deps);
  if (!found.project) return found.reply;
  const project = found.project;
  const result = await deps.store.subscribe({
    projectId: project.id,
    projectName: project.name,
    channel: context.channel,
    actor: context.actor,
    nowMs: deps.clock.now(),
  });
  if (result.status === 'already') return reply.alreadySubscribedReply(project, result.subscription, deps.clock.now());
  return reply.subscribedReply(project, context.actor);
}

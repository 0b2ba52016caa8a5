/**
 * What each `/visibility` verb does, one handler per verb (the command table in ./commands.ts names
 * them). Inline handlers use DynamoDB only — the project is found among the channel's own
 * subscriptions, which keep the project's name; deferred ones also read the service's read API.
 * Who may change is checked before a handler runs (./service.ts); where a project may be changed is
 * checked here, once the project is known. Every change is appended to the channel's history.
 */
import { describeError } from '../observability';
import type { SettingsChange, Subscription } from '../ports';
import { describeChange, recordChange, refusedInChannel } from './access';
import { matchProject } from './project-match';
import { quietHoursLine, withSection } from './channel-settings';
import type { ChannelAccess, CommandContext, CommandOf, DeferredDeps, InlineDeps, PostingAccess, SlackReply } from './ports';
import * as reply from './replies';
import { statusReply } from './status';

export async function answerList(context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  const [subscriptions, changes, shareValue, quiet] = await Promise.all([
    deps.store.forChannel(context.channel),
    deps.store.recentChanges(context.channel),
    deps.shares.encode({ verb: 'list', channel: context.channel }),
    quietHoursLine(context.channel, deps),
  ]);
  return withSection(reply.listReply(subscriptions, changes, deps.clock.now(), shareValue), quiet);
}

type ChangeCommand = CommandOf<'unsubscribe' | 'mute' | 'unmute' | 'mode'>;

/** unsubscribe, mute, unmute, mode: the project is one of the channel's subscriptions. */
export async function changeSubscription(command: ChangeCommand, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  const subscriptions = await deps.store.forChannel(context.channel);
  const match = matchProject(command.project, subscriptions.map(asNamed));
  if (match.status === 'ambiguous') return reply.ambiguousReply(command.project, match.candidates);
  const unsubscribing = command.kind === 'unsubscribe';
  if (match.status === 'not_found')
    return reply.notSubscribedReply(command.project, context.channel, subscriptions, match.suggestions, { unsubscribing });
  const { subscription } = match.project;
  const refused = refusedInChannel(match.project, context.channel, deps);
  if (refused !== null) return refused;
  if (command.kind === 'unsubscribe') return unsubscribe(subscription, context, deps);
  const nowMs = deps.clock.now();
  const change = settingsChange(command, nowMs);
  const changed = await deps.store.change(subscription.projectId, context.channel, change, context.actor, nowMs);
  // Removed between the read and the write (someone unsubscribed meanwhile).
  if (changed === null)
    return reply.notSubscribedReply(
      command.project,
      context.channel,
      subscriptions.filter((s) => s !== subscription),
      [],
    );
  const recorded = await recordChange(deps, context.channel, {
    actor: context.actor,
    whenMs: nowMs,
    what: describeChange(change),
    project: match.project,
  });
  return reply.inChannel(`${reply.changeAnnouncement(changed, context.actor, change)}${recorded ? '' : reply.NOT_RECORDED_NOTE}`);
}

function asNamed(subscription: Subscription) {
  return { id: subscription.projectId, name: subscription.projectName, subscription };
}

async function unsubscribe(subscription: Subscription, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  const removed = await deps.store.unsubscribe(subscription.projectId, context.channel);
  const project = asNamed(subscription);
  // The history keeps unsubscribes: the subscription itself is gone.
  const recorded = removed
    ? await recordChange(deps, context.channel, { actor: context.actor, whenMs: deps.clock.now(), what: 'unsubscribed', project })
    : true;
  return reply.inChannel(
    `${reply.mention(context.actor.userId)} unsubscribed this channel from ${reply.name(project)}.${recorded ? '' : reply.NOT_RECORDED_NOTE}`,
  );
}

export function settingsChange(command: CommandOf<'mute' | 'unmute' | 'mode'>, nowMs: number): SettingsChange {
  if (command.kind === 'mute') return { kind: 'mute', untilMs: nowMs + command.durationMs, label: command.durationLabel };
  if (command.kind === 'unmute') return { kind: 'unmute' };
  return { kind: 'mode', mode: command.mode };
}

export async function answerProjects(context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const projects = await deps.directory.listProjects();
  const here = await deps.store.forChannel(context.channel);
  const shareValue = await deps.shares.encode({ verb: 'projects', channel: context.channel });
  return reply.projectsReply(projects, new Set(here.map((s) => s.projectId)), shareValue);
}

/** The service's project the user named, or the reply saying why there is none. */
async function serviceProject(query: string, deps: DeferredDeps) {
  const match = matchProject(query, await deps.directory.listProjects());
  if (match.status === 'ambiguous') return { reply: reply.ambiguousReply(query, match.candidates) };
  if (match.status === 'not_found') return { reply: reply.notFoundReply(query, match.suggestions, 'service') };
  return { project: match.project };
}

/** `status`: the figures and the gaps read side by side (as the digest reads them), rendered by the digest's renderer. */
export async function answerStatus(command: CommandOf<'status'>, context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const found = await serviceProject(command.project, deps);
  if (!found.project) return found.reply;
  const project = found.project;
  const [overview, gaps, shareValue, snapshot] = await Promise.all([
    deps.status.getVisibility(project.id),
    deps.status.getGapsWithSkipped(project.id),
    deps.shares.encode({ verb: 'status', projectId: project.id, channel: context.channel }),
    latestSnapshot(project.id, deps),
  ]);
  const asked = { by: context.actor.userId, atMs: deps.clock.now() };
  return statusReply({ project, overview, gaps, snapshot }, asked, shareValue, deps.statusOptions);
}

/** The project's snapshot for `status`'s latest-run line; a read that fails only leaves that line out (logged). */
async function latestSnapshot(projectId: string, deps: DeferredDeps) {
  try {
    return (await deps.snapshots?.getSnapshot(projectId)) ?? null;
  } catch (error) {
    deps.log.warn("status without its latest run: the project's snapshot could not be read", { projectId, ...describeError(error) });
    return null;
  }
}

/**
 * Subscribes the channel once the project is known: where it may be changed (`changeChannels`),
 * then whether the bot can post here — a channel it can't post in would only be marked broken on
 * the next run. Subscribing a broken subscription again replaces it (the store's `subscribe`).
 */
export async function answerSubscribe(command: CommandOf<'subscribe'>, context: CommandContext, deps: DeferredDeps): Promise<SlackReply> {
  const found = await serviceProject(command.project, deps);
  if (!found.project) return found.reply;
  const project = found.project;
  const refused = refusedInChannel(project, context.channel, deps);
  if (refused !== null) return refused;
  const posting = await postingAccess(context.channel, project.id, deps);
  if (posting === undefined) return reply.postingUncheckedReply(project);
  if (!posting.canPost) return reply.cannotPostReply(posting, context.channel, project);
  const nowMs = deps.clock.now();
  const result = await deps.store.subscribe({
    projectId: project.id,
    projectName: project.name,
    channel: context.channel,
    actor: context.actor,
    nowMs,
  });
  if (result.status === 'already') return reply.alreadySubscribedReply(project, result.subscription, nowMs);
  const recorded = await recordChange(deps, context.channel, { actor: context.actor, whenMs: nowMs, what: 'subscribed', project });
  const subscribed = reply.subscribedReply(project, context.actor, result.subscription.mode);
  return recorded ? subscribed : { ...subscribed, text: `${subscribed.text}${reply.NOT_RECORDED_NOTE}` };
}

/**
 * Whether the bot can post the project's digests in the channel, asked with the token they post with
 * (on a scoped answer, the project's tenant's); undefined when that could not be said (logged; nothing
 * is subscribed).
 */
async function postingAccess(channel: string, projectId: string, deps: DeferredDeps): Promise<PostingAccess | undefined> {
  try {
    return await channelsOf(projectId, deps).postingAccess(channel);
  } catch (error) {
    deps.log.warn('could not check that the bot can post in a channel: nothing subscribed', { channel, ...describeError(error) });
    return undefined;
  }
}

function channelsOf(projectId: string, deps: DeferredDeps): ChannelAccess {
  if (deps.channelsOf === undefined) return deps.channels;
  const channels = deps.channelsOf(projectId);
  // Never the stack's token in its stead: a tenant's digests post with its own.
  if (channels === undefined) throw new Error(`the tenant of project ${projectId} has no channel check here`);
  return channels;
}

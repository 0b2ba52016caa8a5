/**
 * The Slack app's side of the `slackAccess` policy (./policy.ts decides): a refusal answered and
 * counted, the channel check once a project is known, and every change appended to the channel's
 * history, which `list` shows.
 */
import { SLACK_APP_METRICS } from '../contracts';
import { describeError } from '../observability';
import type { Actor, AuditEntry, SettingsChange, SubscriptionStore } from '../ports';
import { authorizeChannel, type Refusal } from './policy';
import type { NamedProject } from './project-match';
import type { AccessDeps, SlackReply } from './ports';
import { refusalReply } from './replies';

/** The ephemeral refusal, counted (and a user group that could not be read, logged). */
export function refuse(refusal: Refusal, deps: Pick<AccessDeps, 'metrics' | 'log'>, project?: NamedProject): SlackReply {
  deps.metrics.count(SLACK_APP_METRICS.slackCommandRefused);
  if (refusal.kind === 'group_unreadable')
    deps.log.warn('Slack user group could not be read: change refused', { groupId: refusal.groupId, ...describeError(refusal.cause) });
  return refusalReply(refusal, project);
}

/** The refusal when `project` may not be changed in `channel` (its `changeChannels`); null when it may. */
export function refusedInChannel(project: NamedProject, channel: string, deps: AccessDeps): SlackReply | null {
  const decision = authorizeChannel(project.id, channel, deps.access);
  return decision.allowed ? null : refuse(decision.refusal, deps, project);
}

/**
 * The refusal when a channel-wide change (`quiet`, `weekly`) would change how a project the channel
 * subscribes to is delivered here while its `changeChannels` leave this channel out; null when it may.
 */
export async function refusedChannelWide(
  channel: string,
  deps: AccessDeps & { store: Pick<SubscriptionStore, 'forChannel'> },
): Promise<SlackReply | null> {
  if (Object.keys(deps.access.changeChannels).length === 0) return null;
  for (const subscription of await deps.store.forChannel(channel)) {
    const refused = refusedInChannel({ id: subscription.projectId, name: subscription.projectName }, channel, deps);
    if (refused !== null) return refused;
  }
  return null;
}

/** What a change does, as its history and a subscription's `last change` say it. */
export function describeChange(change: SettingsChange): string {
  if (change.kind === 'mute') return `muted for ${change.label}`;
  if (change.kind === 'unmute') return 'unmuted';
  return `mode ${change.mode}`;
}

/**
 * Appends the change to the channel's history; false when the table failed (logged): the change is
 * in effect, so the answer says it and adds that it is missing from the history.
 */
export async function recordChange(
  deps: { store: Pick<SubscriptionStore, 'recordChange'>; log: AccessDeps['log'] },
  channel: string,
  change: { actor: Actor; whenMs: number; what: string; project: NamedProject },
): Promise<boolean> {
  const entry: AuditEntry = {
    who: change.actor.userId,
    whenMs: change.whenMs,
    what: change.what,
    projectId: change.project.id,
    projectName: change.project.name,
  };
  try {
    await deps.store.recordChange(channel, entry);
    return true;
  } catch (error) {
    deps.log.error('a subscription change could not be recorded in the channel history', {
      channel,
      projectId: entry.projectId,
      what: entry.what,
      ...describeError(error),
    });
    return false;
  }
}

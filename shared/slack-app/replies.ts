/**
 * The texts the app answers with. Errors are ephemeral and end with what to do; changes to a
 * channel's subscriptions are posted in the channel, so everyone there sees who changed what.
 */
import { escapeSlackText, truncateText } from '../slack-text';
import type { NamedProject } from './project-match';
import type { Subscription } from '../ports';
import type { SlackReply } from './ports';
import { SLACK_APP_DEFAULTS } from '../contracts';

/** Lines shown before "and N more": keeps a reply well inside Slack's 40,000-character text limit. */
export const MAX_LISTED = 50;
const REPLY_TEXT_LIMIT = 3_000;
const COMMAND = SLACK_APP_DEFAULTS.command;

export function ephemeral(text: string): SlackReply {
  return { response_type: 'ephemeral', text: truncateText(text, REPLY_TEXT_LIMIT) };
}

export function inChannel(text: string): SlackReply {
  return { response_type: 'in_channel', text: truncateText(text, REPLY_TEXT_LIMIT) };
}

export function name(project: NamedProject): string {
  return `*${escapeSlackText(project.name)}*`;
}

export function mention(userId: string): string {
  return `<@${userId}>`;
}

/** A time every reader sees in their own time zone (Slack date formatting), with a plain fallback. */
export function slackDate(ms: number): string {
  const iso = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${iso}>`;
}

/** `lines`: one per verb, from the command table (./commands.ts). */
export function helpReply(lines: readonly string[]): SlackReply {
  return ephemeral(`*${COMMAND}* — AI-visibility digests in this channel\n${lines.join('\n')}`);
}

/** `usage`: the verb's usage line (`mute <project> <duration…>`). */
export function usageReply(verb: string, usage: string, problem: string): SlackReply {
  return ephemeral(`\`${COMMAND} ${verb}\`: ${problem}.\nUsage: \`${COMMAND} ${usage}\``);
}

/** `suggestion`: the usage line of the closest verb, when one is close. */
export function unknownReply(verb: string, suggestion: string | undefined): SlackReply {
  const hint = suggestion ? ` Did you mean \`${COMMAND} ${suggestion}\`?` : '';
  return ephemeral(`I don't know \`${escapeSlackText(truncateText(verb, 40))}\`.${hint} \`${COMMAND} help\` lists the commands.`);
}

export function ambiguousReply(query: string, candidates: readonly NamedProject[]): SlackReply {
  const sorted = [...candidates].sort((a, b) => a.name.localeCompare(b.name));
  const lines = listLines(sorted, (p) => `• ${name(p)} — id \`${escapeSlackText(p.id)}\``);
  return ephemeral(`"${escapeSlackText(query)}" matches several projects:\n${lines}\nRepeat the command with the project's id.`);
}

export function notFoundReply(query: string, suggestions: readonly NamedProject[], where: 'service' | 'channel'): SlackReply {
  const close = suggestions.length > 0 ? ` Did you mean ${suggestions.map(name).join(', ')}?` : '';
  const next =
    where === 'service'
      ? `\`${COMMAND} projects\` lists the projects the bridge can see.`
      : `This channel isn't subscribed to it: \`${COMMAND} list\` shows what it is subscribed to.`;
  return ephemeral(`No project matches "${escapeSlackText(query)}".${close} ${next}`);
}

export function settingsSummary(subscription: Subscription, nowMs: number): string {
  const muted =
    subscription.mutedUntilMs !== undefined && subscription.mutedUntilMs > nowMs
      ? `muted until ${slackDate(subscription.mutedUntilMs)}`
      : 'not muted';
  return `mode \`${subscription.mode}\`, ${muted}`;
}

export function listReply(subscriptions: readonly Subscription[], nowMs: number): SlackReply {
  if (subscriptions.length === 0) {
    return ephemeral(
      `This channel has no subscriptions. \`${COMMAND} subscribe <project>\` adds one; \`${COMMAND} projects\` lists the projects.`,
    );
  }
  const sorted = [...subscriptions].sort((a, b) => a.projectName.localeCompare(b.projectName));
  const lines = listLines(sorted, (s) => {
    const change = `last change: ${escapeSlackText(s.lastChange)} by ${mention(s.changedBy)} ${slackDate(s.changedAtMs)}`;
    return `• ${name({ id: s.projectId, name: s.projectName })} — ${settingsSummary(s, nowMs)} (${change})`;
  });
  return ephemeral(`This channel's subscriptions (${subscriptions.length}):\n${lines}`);
}

export function projectsReply(projects: readonly NamedProject[], subscribedHere: ReadonlySet<string>): SlackReply {
  if (projects.length === 0) return ephemeral('The read key sees no projects. Check the key in the bridge (`bridge doctor`).');
  const sorted = [...projects].sort((a, b) => a.name.localeCompare(b.name));
  const lines = listLines(
    sorted,
    (p) => `• ${name(p)} — id \`${escapeSlackText(p.id)}\`${subscribedHere.has(p.id) ? ' ✓ subscribed here' : ''}`,
  );
  return ephemeral(`Projects the bridge can see (${projects.length}):\n${lines}\n\`${COMMAND} subscribe <name or id>\` posts one here.`);
}

function listLines<T>(items: readonly T[], line: (item: T) => string): string {
  const shown = items.slice(0, MAX_LISTED).map(line);
  if (items.length > MAX_LISTED) shown.push(`…and ${items.length - MAX_LISTED} more`);
  return shown.join('\n');
}

export function unavailableReply(what: string): SlackReply {
  return ephemeral(
    `${what} did not answer just now, so nothing was done. Try again in a minute; if it keeps failing, ask the bridge's operator to run \`bridge doctor\`.`,
  );
}

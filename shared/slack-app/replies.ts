/**
 * The texts the app answers with. Errors are ephemeral and end with what to do; changes to a
 * channel's subscriptions are posted in the channel, so everyone there sees who changed what.
 *
 * Every string from the service, the store or the user goes through the digest's sanitizer
 * (`serviceText`: no mentions or links, no bidi or zero-width characters, no style markers, cut), and
 * never inside a code span: a backtick in a name could close the span.
 */
import { SLACK_LIMITS, serviceName, serviceText, truncateText } from '../slack-text';
import type { NamedProject } from './project-match';
import type { Actor, SettingsChange, Subscription } from '../ports';
import type { SlackReply } from './ports';
import { SLACK_APP_DEFAULTS } from '../contracts';

/** Lines shown before "and N more": keeps a reply well inside Slack's 40,000-character text limit. */
export const MAX_LISTED = 50;
/** A reply is one text object: Slack's 3,000-character limit. */
export const REPLY_TEXT_LIMIT = SLACK_LIMITS.textObject;
const COMMAND = SLACK_APP_DEFAULTS.command;

/** Longest shown piece of each foreign string (escaped UTF-16 code units), so one long name can't fill a reply. */
export const REPLY_LEN = {
  projectName: 120,
  id: 80,
  query: 100,
  verb: 40,
  lastChange: 100,
  userId: 40,
} as const;

export function ephemeral(text: string): SlackReply {
  return { response_type: 'ephemeral', text: truncateText(text, REPLY_TEXT_LIMIT) };
}

export function inChannel(text: string): SlackReply {
  return { response_type: 'in_channel', text: truncateText(text, REPLY_TEXT_LIMIT) };
}

/** The project's name in bold (its id when the name shows nothing), sanitized and cut. */
export function name(project: NamedProject): string {
  return `*${serviceName(project.name, project.id, REPLY_LEN.projectName)}*`;
}

/** A project id, sanitized, outside any code span. */
export function projectId(id: string): string {
  return serviceText(id, REPLY_LEN.id);
}

/** What the user typed, shown back sanitized. */
export function quoted(text: string, max: number = REPLY_LEN.query): string {
  return `"${serviceText(text, max)}"`;
}

/** A Slack user id (as Slack sends it) becomes a mention; anything else, e.g. a tampered store item, is shown as text. */
const SLACK_USER_ID = /^[UW][A-Z0-9]{1,40}$/;

export function mention(userId: string): string {
  if (SLACK_USER_ID.test(userId)) return `<@${userId}>`;
  return userId.trim() === '' ? 'someone' : serviceText(userId, REPLY_LEN.userId);
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
  return ephemeral(`I don't know ${quoted(verb, REPLY_LEN.verb)}.${hint} \`${COMMAND} help\` lists the commands.`);
}

export function ambiguousReply(query: string, candidates: readonly NamedProject[]): SlackReply {
  const sorted = [...candidates].sort((a, b) => a.name.localeCompare(b.name));
  const lines = listLines(sorted, (p) => `• ${name(p)} — id ${projectId(p.id)}`);
  return ephemeral(`${quoted(query)} matches several projects:\n${lines}\nRepeat the command with the project's id.`);
}

export function notFoundReply(query: string, suggestions: readonly NamedProject[], where: 'service' | 'channel'): SlackReply {
  const close = suggestions.length > 0 ? ` Did you mean ${suggestions.map(name).join(', ')}?` : '';
  const next =
    where === 'service'
      ? `\`${COMMAND} projects\` lists the projects the bridge can see.`
      : `This channel isn't subscribed to it: \`${COMMAND} list\` shows what it is subscribed to.`;
  return ephemeral(`No project matches ${quoted(query)}.${close} ${next}`);
}

/** Posted in the channel: who subscribed it, and how to quieten it (the name stays out of the command's code span). */
export function subscribedReply(project: NamedProject, actor: Actor): SlackReply {
  return inChannel(
    `✅ ${mention(actor.userId)} subscribed this channel to ${name(project)}: its digests are posted here. ` +
      `\`${COMMAND} mode\` with its name and \`changes\` keeps quiet runs to one line; \`${COMMAND} mute\` with its name and \`7d\` pauses them.`,
  );
}

export function alreadySubscribedReply(project: NamedProject, subscription: Subscription, nowMs: number): SlackReply {
  return ephemeral(`This channel is already subscribed to ${name(project)} (${settingsSummary(subscription, nowMs)}).`);
}

/** One line saying who changed what, e.g. "🔕 @ana muted *Northwind* here for 7d (until …)"; a reply or a button's note. */
export function changeAnnouncement(subscription: Subscription, actor: Actor, change: SettingsChange): string {
  const who = mention(actor.userId);
  const project = name({ id: subscription.projectId, name: subscription.projectName });
  switch (change.kind) {
    case 'mute':
      return `🔕 ${who} muted ${project} here for ${serviceText(change.label, REPLY_LEN.verb)} (until ${slackDate(change.untilMs)}). \`${COMMAND} unmute\` with its name ends it.`;
    case 'unmute':
      return `🔔 ${who} unmuted ${project} here: its digests are posted again.`;
    case 'mode':
      return change.mode === 'changes'
        ? `${who} set ${project} to *changes* here: a run where nothing moved gets one line. \`${COMMAND} mode\` with its name and \`full\` undoes it.`
        : `${who} set ${project} to *full* here: every run gets the whole digest.`;
  }
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
    const change = `last change: ${serviceText(s.lastChange, REPLY_LEN.lastChange)} by ${mention(s.changedBy)} ${slackDate(s.changedAtMs)}`;
    return `• ${name({ id: s.projectId, name: s.projectName })} — ${settingsSummary(s, nowMs)} (${change})`;
  });
  return ephemeral(`This channel's subscriptions (${subscriptions.length}):\n${lines}`);
}

export function projectsReply(projects: readonly NamedProject[], subscribedHere: ReadonlySet<string>): SlackReply {
  if (projects.length === 0) return ephemeral('The read key sees no projects. Check the key in the bridge (`bridge doctor`).');
  const sorted = [...projects].sort((a, b) => a.name.localeCompare(b.name));
  const lines = listLines(sorted, (p) => `• ${name(p)} — id ${projectId(p.id)}${subscribedHere.has(p.id) ? ' ✓ subscribed here' : ''}`);
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

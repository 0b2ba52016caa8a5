/**
 * The texts the app answers with. Errors are ephemeral and end with what to do; changes to a
 * channel's subscriptions are posted in the channel, so everyone there sees who changed what.
 *
 * Every string from the service, the store or the user goes through the digest's sanitizer
 * (`serviceText`: no mentions or links, no bidi or zero-width characters, no style markers, cut), and
 * never inside a code span: a backtick in a name could close the span.
 */
import { SLACK_LIMITS, quotedInput, serviceName, serviceText, truncateText } from '../slack-text';
import type { NamedProject } from './project-match';
import type { Actor, AuditEntry, SettingsChange, Subscription } from '../ports';
import type { PostingAccess, SlackReply } from './ports';
import type { Refusal } from './policy';
import { SLACK_APP_DEFAULTS, type DigestMode } from '../contracts';
import { ACTION_IDS } from '../buttons/ids';
import { describeFilter } from '../digest/channel-filter';

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
  code: 40,
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
  return quotedInput(text, max);
}

/** A Slack user id (as Slack sends it) becomes a mention; anything else, e.g. a tampered store item, is shown as text. */
const SLACK_USER_ID = /^[UW][A-Z0-9]{1,40}$/;

export function mention(userId: string): string {
  if (SLACK_USER_ID.test(userId)) return `<@${userId}>`;
  return userId.trim() === '' ? 'someone' : serviceText(userId, REPLY_LEN.userId);
}

const USER_GROUP_ID = /^S[A-Z0-9]{2,40}$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,40}$/;

/** A user group id becomes its mention (shown as @group); anything else as text. */
export function groupMention(groupId: string): string {
  return USER_GROUP_ID.test(groupId) ? `<!subteam^${groupId}>` : serviceText(groupId, REPLY_LEN.userId);
}

/** A channel id becomes its link (#name); anything else as text. */
export function channelMention(channel: string): string {
  return CHANNEL_ID.test(channel) ? `<#${channel}>` : serviceText(channel, REPLY_LEN.userId);
}

/** "a", "a and b", "a, b and c"; past `max` items "…and N others". */
function spokenList(items: readonly string[], joiner: 'and' | 'or', max = 10): string {
  const shown = items.slice(0, max);
  const rest = items.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} ${joiner} ${rest} other${rest === 1 ? '' : 's'}`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} ${joiner} ${shown.at(-1) ?? ''}`;
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
/** The confirmation names the mode the subscription is in and offers the other one, never the one it has. */
export function subscribedReply(project: NamedProject, actor: Actor, mode: DigestMode): SlackReply {
  const modeHint =
    mode === 'changes'
      ? `A run where nothing moved gets one line (\`${COMMAND} mode\` with its name and \`full\` sends every digest whole)`
      : `Every run gets the whole digest (\`${COMMAND} mode\` with its name and \`changes\` keeps quiet runs to one line)`;
  return inChannel(
    `✅ ${mention(actor.userId)} subscribed this channel to ${name(project)}: its digests are posted here. ` +
      `${modeHint}; \`${COMMAND} mute\` with its name and \`7d\` pauses them.`,
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

/**
 * The note a settings button leaves on its digest (replacing the previous one), e.g. "🔕 <@U…> muted
 * *Northwind* here for 7d (until …): Unmute below ends it". The buttons below show the new state.
 */
export function buttonNote(subscription: Subscription, actor: Actor, change: SettingsChange): string {
  const who = mention(actor.userId);
  const project = name({ id: subscription.projectId, name: subscription.projectName });
  switch (change.kind) {
    case 'mute':
      return `🔕 ${who} muted ${project} here for ${serviceText(change.label, REPLY_LEN.verb)} (until ${slackDate(change.untilMs)}): *Unmute* below ends it sooner.`;
    case 'unmute':
      return `🔔 ${who} unmuted ${project} here: its digests are posted again.`;
    case 'mode':
      return change.mode === 'changes'
        ? `${who} set ${project} to *only changes* here: a run where nothing moved gets one line. *Full digests* below undoes it.`
        : `${who} set ${project} to *full digests* here: every run gets the whole digest.`;
  }
}

/** A project name the user typed, plain enough to sit inside a command's code span (a backtick or markup never is). */
const PLAIN_NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,59}$/u;

/** "`/visibility subscribe Voltway`", or with an unusual name "`/visibility subscribe` "…"" (never a foreign string in a code span). */
export function commandWith(verb: string, project: string): string {
  const plain = project.trim();
  return PLAIN_NAME.test(plain) ? `\`${COMMAND} ${verb} ${plain}\`` : `\`${COMMAND} ${verb}\` ${quoted(project)}`;
}

/**
 * An inline change (unsubscribe, mute, unmute, mode) naming no subscription of this channel. The
 * inline path knows only the channel's subscriptions, so it says what the channel is subscribed to
 * and never that the project doesn't exist.
 */
export function notSubscribedReply(
  query: string,
  channel: string,
  subscriptions: readonly Subscription[],
  suggestions: readonly NamedProject[],
  options: { unsubscribing?: boolean } = {},
): SlackReply {
  const close = suggestions.length > 0 ? ` Did you mean ${suggestions.map(name).join(', ')}?` : '';
  const names = [...subscriptions]
    .sort((a, b) => a.projectName.localeCompare(b.projectName))
    .map((s) => name({ id: s.projectId, name: s.projectName }));
  const here =
    names.length === 0
      ? ' It has no subscriptions yet.'
      : ` It is subscribed to ${spokenList(names, 'and')} (\`${COMMAND} list\` shows their settings).`;
  const where = channel.startsWith('D') ? 'this conversation' : channelMention(channel);
  // Unsubscribing from what isn't here needs nothing done: no "subscribe first".
  if (options.unsubscribing === true) return ephemeral(`No project subscribed in ${where} matches ${quoted(query)}.${close}${here}`);
  return ephemeral(
    `${channel.startsWith('D') ? 'This conversation' : where} isn't subscribed to anything called ${quoted(query)} — ${commandWith('subscribe', query)} first.${close}${here}`,
  );
}

const CHANGES = 'change digest subscriptions (`subscribe`, `unsubscribe`, `mute`, `unmute`, `mode` and the digest buttons)';
const READS_OPEN = `Reading (\`${COMMAND} status\`, \`projects\`, \`list\`) is open to everyone.`;

/** Why a change was refused, naming who can (or where); `project` names the project of a channel refusal. */
export function refusalReply(refusal: Refusal, project?: NamedProject): SlackReply {
  switch (refusal.kind) {
    case 'not_listed':
      return ephemeral(`Only ${spokenList(refusal.userIds.map(mention), 'and')} can ${CHANGES}: ask one of them. ${READS_OPEN}`);
    case 'not_in_group':
      return ephemeral(`Only members of ${groupMention(refusal.groupId)} can ${CHANGES}: ask one of them. ${READS_OPEN}`);
    case 'group_unreadable':
      return ephemeral(
        `Only members of ${groupMention(refusal.groupId)} can ${CHANGES}, and Slack didn't tell me its members just now, so nothing was changed. ` +
          "Try again in a minute; if it keeps failing, ask the bridge's operator to run `bridge doctor` (the app needs the `usergroups:read` scope).",
      );
    case 'wrong_channel': {
      const named = project ?? { id: refusal.projectId, name: refusal.projectId };
      return ephemeral(
        `${name(named)}'s subscriptions can be changed only in ${spokenList(refusal.channels.map(channelMention), 'or')}, so nothing was changed here.`,
      );
    }
  }
}

/** `subscribe` in a channel the bot can't post in: how to fix it; nothing was subscribed. */
export function cannotPostReply(access: Exclude<PostingAccess, { canPost: true }>, channel: string, project: NamedProject): SlackReply {
  const bot = access.botUserId === undefined ? 'this app' : mention(access.botUserId);
  const invite = `type \`/invite\` here and pick ${bot}, then subscribe again`;
  const why = {
    not_member: `I'm not in ${channelMention(channel)}, so I can't post ${name(project)}'s digests here: ${invite}.`,
    archived: `${channelMention(channel)} is archived, so I can't post ${name(project)}'s digests in it: unarchive it, or subscribe another channel.`,
    not_found: `I can't see this channel (a private channel or a conversation I'm not in), so I can't post ${name(project)}'s digests here: ${invite}.`,
  }[access.reason];
  return ephemeral(`${why} Nothing was subscribed.`);
}

/** Slack could not say whether the bot can post here: nothing subscribed. */
export function postingUncheckedReply(project: NamedProject): SlackReply {
  return ephemeral(
    `I couldn't check that I can post in this channel just now, so nothing was subscribed to ${name(project)}. ` +
      "Try again in a minute; if it keeps failing, ask the bridge's operator to run `bridge doctor` (the app needs the `channels:read` scope, and `groups:read` for private channels).",
  );
}

/** Added to a change's announcement when its entry in the channel's history could not be written. */
export const NOT_RECORDED_NOTE = `\n_(This change is in effect but missing from \`${COMMAND} list\`'s recent changes: the bridge's table failed to record it.)_`;

export function settingsSummary(subscription: Subscription, nowMs: number): string {
  const muted =
    subscription.mutedUntilMs !== undefined && subscription.mutedUntilMs > nowMs
      ? `muted until ${slackDate(subscription.mutedUntilMs)}`
      : 'not muted';
  const filter =
    subscription.filter === undefined ? '' : `, filter: ${serviceText(describeFilter(subscription.filter), REPLY_LEN.lastChange)}`;
  return `mode \`${subscription.mode}\`, ${muted}${filter}`;
}

/** How many of the channel's recent changes `list` shows. */
export const RECENT_CHANGES_SHOWN = 10;

/**
 * `list`: the channel's subscriptions with their settings, last change and whether they are broken,
 * then its recent changes (unsubscribes included). Ephemeral, with a "Share in channel" button.
 */
export function listReply(
  subscriptions: readonly Subscription[],
  changes: readonly AuditEntry[],
  nowMs: number,
  shareValue: string | undefined,
): SlackReply {
  const sections = [subscriptionsText(subscriptions, nowMs)];
  if (changes.length > 0) sections.push(recentChangesText(changes));
  // Nothing to show the channel: an empty list stays the asker's hint, without a Share button.
  const worthSharing = subscriptions.length > 0 || changes.length > 0;
  return shareable(sections, worthSharing ? shareValue : undefined);
}

function subscriptionsText(subscriptions: readonly Subscription[], nowMs: number): string {
  if (subscriptions.length === 0)
    return `This channel has no subscriptions. \`${COMMAND} subscribe <project>\` adds one; \`${COMMAND} projects\` lists the projects.`;
  const sorted = [...subscriptions].sort((a, b) => a.projectName.localeCompare(b.projectName));
  const lines = listLines(sorted, (s) => {
    const change = `last change: ${serviceText(s.lastChange, REPLY_LEN.lastChange)} by ${mention(s.changedBy)} ${slackDate(s.changedAtMs)}`;
    const line = `• ${name({ id: s.projectId, name: s.projectName })} — ${settingsSummary(s, nowMs)} (${change})`;
    return s.broken === undefined ? line : `${line}\n   ${brokenNote(s.broken)}`;
  });
  return `This channel's subscriptions (${subscriptions.length}):\n${lines}`;
}

/** A subscription Slack refused for good: skipped by the digest until subscribed again. */
export function brokenNote(broken: { code: string; atMs: number }): string {
  const fix =
    broken.code === 'is_archived'
      ? 'unarchive the channel'
      : broken.code === 'not_in_channel' || broken.code === 'channel_not_found'
        ? 'invite the bot'
        : 'fix that';
  // A Slack error code (lower case and underscores) reads best as code; anything else in the item is shown sanitized.
  const code = /^[a-z0-9_]{1,40}$/.test(broken.code) ? `\`${broken.code}\`` : serviceText(broken.code, REPLY_LEN.code);
  return `⚠ not receiving since ${slackDate(broken.atMs)}: Slack said ${code} — ${fix}, then subscribe again.`;
}

function recentChangesText(changes: readonly AuditEntry[]): string {
  const lines = changes.slice(0, RECENT_CHANGES_SHOWN).map((c) => `• ${slackDate(c.whenMs)} ${mention(c.who)} — ${auditWhat(c)}`);
  return `*Recent changes*\n${lines.join('\n')}`;
}

/** "muted *Voltway* for 7d": the stored summary around the project's name. */
function auditWhat(entry: AuditEntry): string {
  const project = name({ id: entry.projectId, name: entry.projectName });
  const [verb = '', ...rest] = serviceText(entry.what, REPLY_LEN.lastChange).split(' ');
  return [verb, project, ...rest].filter((part) => part !== '').join(' ');
}

/** An ephemeral answer of a read, one section per part, with a "Share in channel" button (none without a signed value). */
export function shareable(sections: readonly string[], shareValue: string | undefined): SlackReply {
  const texts = sections.map((text) => truncateText(text, SLACK_LIMITS.textObject));
  const blocks: unknown[] = texts.map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } }));
  if (shareValue !== undefined) blocks.push(shareBlock(shareValue));
  return { response_type: 'ephemeral', text: truncateText(texts.join('\n\n'), REPLY_TEXT_LIMIT), blocks };
}

/** A read's answer already rendered as blocks (e.g. `status`), with a "Share in channel" button (none without a signed value). */
export function shareableBlocks(text: string, blocks: readonly unknown[], shareValue: string | undefined): SlackReply {
  return {
    response_type: 'ephemeral',
    text: truncateText(text, REPLY_TEXT_LIMIT),
    blocks: shareValue === undefined ? [...blocks] : [...blocks, shareBlock(shareValue)],
  };
}

const SHARE_BLOCK_ID = 'share';

function shareBlock(value: string): unknown {
  return {
    type: 'actions',
    block_id: SHARE_BLOCK_ID,
    elements: [
      {
        type: 'button',
        action_id: ACTION_IDS.shareInChannel,
        text: { type: 'plain_text', text: 'Share in channel' },
        value,
      },
    ],
  };
}

/** Whether a reply is a read's answer that can be shared (errors are never posted in the channel). */
export function isShareable(reply: SlackReply): boolean {
  return (reply.blocks ?? []).some((block) => isShareBlock(block));
}

/** The same answer posted in the channel for everyone, without its button, saying who shared it. */
export function asShared(reply: SlackReply, sharedBy: Actor): SlackReply {
  const note = `Shared by ${mention(sharedBy.userId)}`;
  const blocks = (reply.blocks ?? []).filter((block) => !isShareBlock(block));
  return {
    response_type: 'in_channel',
    text: truncateText(`${reply.text}\n${note}`, REPLY_TEXT_LIMIT),
    blocks: [...blocks, { type: 'context', elements: [{ type: 'mrkdwn', text: note }] }],
  };
}

/** Deletes the message the button was on (the ephemeral answer, once shared). */
export function deleteOriginal(): SlackReply {
  return { response_type: 'ephemeral', text: '', delete_original: true };
}

function isShareBlock(block: unknown): boolean {
  return typeof block === 'object' && block !== null && (block as { block_id?: unknown }).block_id === SHARE_BLOCK_ID;
}

export function projectsReply(
  projects: readonly NamedProject[],
  subscribedHere: ReadonlySet<string>,
  shareValue: string | undefined,
): SlackReply {
  if (projects.length === 0) return ephemeral('The read key sees no projects. Check the key in the bridge (`bridge doctor`).');
  const sorted = [...projects].sort((a, b) => a.name.localeCompare(b.name));
  const lines = listLines(sorted, (p) => `• ${name(p)} — id ${projectId(p.id)}${subscribedHere.has(p.id) ? ' ✓ subscribed here' : ''}`);
  return shareable(
    [`Projects the bridge can see (${projects.length}):\n${lines}\n\`${COMMAND} subscribe <name or id>\` posts one here.`],
    shareValue,
  );
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

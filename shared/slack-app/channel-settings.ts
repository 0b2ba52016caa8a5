/**
 * The channel-settings verbs: `filter` (what of a project's runs this channel hears, stored with its
 * subscription) and `quiet` (the channel's quiet hours, when digests are held for a catch-up). Both are
 * changes (`access: 'change'`: the stage's policy decides who; `filter` also where, once the project is
 * known), answered inline from DynamoDB only and appended to the channel's history.
 */
import { describeFilter, engineKey, parseFilterArgs } from '../digest/channel-filter';
import { canonicalTimeZone, describeWindow, isTimeZone, parseClock, quietEndsAt } from '../digest/quiet-hours';
import { isQuietAt, MIN_OPEN_MINUTES, openMinutesPerDay } from '../digest/quiet-hours';
import type { ChannelFilter, DigestStore, Subscription } from '../ports';
import { SLACK_APP_DEFAULTS } from '../contracts';
import { quotedInput, serviceText } from '../slack-text';
import { recordChange, refusedChannelWide, refusedInChannel } from './access';
import { matchProject, type NamedProject } from './project-match';
import type { CommandArgs, CommandContext, CommandOf, InlineDeps, ProjectEngines, SlackReply } from './ports';
import * as reply from './replies';

const COMMAND = SLACK_APP_DEFAULTS.command;
/** A filter or window shown back is cut to this. */
const SHOWN_CHARS = 300;

type ArgsParse<V extends keyof CommandArgs> = { ok: true; args: CommandArgs[V] } | { ok: false; problem: string };

// --- Parsing -------------------------------------------------------------------------------------

export function parseFilter(args: readonly string[]): ArgsParse<'filter'> {
  const parsed = parseFilterArgs(args);
  return parsed.ok ? { ok: true, args: { project: parsed.project, filter: parsed.filter } } : parsed;
}

/** `quiet 22:00-07:00 [tz]` / `quiet off`; the zone is checked here, the stage's default filled in by the handler. */
export function parseQuiet(args: readonly string[]): ArgsParse<'quiet'> {
  const example = 'e.g. `quiet 22:00-07:00 Europe/Berlin`, or `quiet off`';
  const [range, zone, ...rest] = args;
  if (range === undefined) return { ok: false, problem: `give the quiet window, ${example}` };
  if (range.toLowerCase() === 'off')
    return zone === undefined ? { ok: true, args: { window: null } } : { ok: false, problem: '`quiet off` takes nothing else' };
  if (rest.length > 0) return { ok: false, problem: `give a window and at most a time zone, ${example}` };
  const [from, to, extra] = range.split(/[-–—]/);
  const startMinute = parseClock(from ?? '');
  const endMinute = parseClock(to ?? '');
  if (extra !== undefined || startMinute === undefined || endMinute === undefined)
    return { ok: false, problem: `${quotedInput(range)} is not a window: write two 24-hour times with a dash, ${example}` };
  if (startMinute === endMinute) return { ok: false, problem: 'the window starts and ends at the same time: give two different times' };
  if (openMinutesPerDay({ startMinute, endMinute }) < MIN_OPEN_MINUTES)
    return {
      ok: false,
      problem: `a window must leave at least ${MIN_OPEN_MINUTES} minutes a day open for the catch-up: end it earlier or start it later`,
    };
  if (zone !== undefined && !isTimeZone(zone))
    return {
      ok: false,
      problem: `${quotedInput(zone)} is not a time zone: use an IANA name such as Europe/Berlin, America/New_York or UTC`,
    };
  return { ok: true, args: { window: { startMinute, endMinute, timeZone: zone === undefined ? undefined : canonicalTimeZone(zone) } } };
}

// --- Handlers ------------------------------------------------------------------------------------

function asNamed(subscription: Subscription) {
  return { id: subscription.projectId, name: subscription.projectName, subscription };
}

/** `filter <project> …`: the project is one of the channel's subscriptions; the filter replaces the last one. */
export async function answerFilter(command: CommandOf<'filter'>, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  const subscriptions = await deps.store.forChannel(context.channel);
  const match = matchProject(command.project, subscriptions.map(asNamed));
  if (match.status === 'ambiguous') return reply.ambiguousReply(command.project, match.candidates);
  if (match.status === 'not_found') return reply.notSubscribedReply(command.project, context.channel, subscriptions, match.suggestions);
  const refused = refusedInChannel(match.project, context.channel, deps);
  if (refused !== null) return refused;
  const engines = await checkEngines(command.filter, match.project, deps.engines);
  if (engines.refusal !== undefined) return reply.ephemeral(engines.refusal);
  const nowMs = deps.clock.now();
  const what = command.filter === null ? 'filter off' : `filter ${describeFilter(command.filter)}`;
  const { subscription } = match.project;
  const changed = await deps.store.setFilter(subscription.projectId, context.channel, command.filter, what, context.actor, nowMs);
  if (changed === null) return reply.notSubscribedReply(command.project, context.channel, [], []);
  const recorded = await recordChange(deps, context.channel, { actor: context.actor, whenMs: nowMs, what, project: match.project });
  const who = reply.mention(context.actor.userId);
  const project = reply.name(match.project);
  const text =
    command.filter === null
      ? `${who} removed the filter of ${project} here: this channel hears every engine, every alert and every change called.`
      : `${who} filtered ${project} here: ${serviceText(describeFilter(command.filter), SHOWN_CHARS)}. ` +
        `A run with nothing left after it is not posted here. \`${COMMAND} filter\` with its name and \`off\` removes it.`;
  return reply.inChannel(`${text}${engines.note ?? ''}${recorded ? '' : reply.NOT_RECORDED_NOTE}`);
}

/**
 * The filter's `engines=` against the project's engines (its stored snapshot): a name the project has
 * no engine for would leave that part of the filter empty for good, so it is refused, with the closest
 * names. Before the project's first run is stored the names can't be checked: accepted, and said so.
 */
async function checkEngines(
  filter: ChannelFilter | null,
  project: NamedProject,
  source: ProjectEngines | undefined,
): Promise<{ refusal?: string; note?: string }> {
  const wanted = filter?.engines ?? [];
  if (wanted.length === 0 || source === undefined) return {};
  const known = await source.enginesOf(project.id);
  if (known === undefined) return { note: `\n_No run of ${reply.name(project)} is stored yet, so the engine names could not be checked._` };
  const unknown = wanted.filter((name) => !known.some((engine) => engineKey(engine) === engineKey(name)));
  const [first] = unknown;
  if (first === undefined) return {};
  const named = known.map((engine) => ({ id: engine, name: engine }));
  const match = matchProject(first, named);
  const close = match.status === 'found' ? [match.project] : match.status === 'ambiguous' ? match.candidates : match.suggestions;
  const shown = (engines: readonly { name: string }[]) => engines.map((e) => serviceText(e.name, SHOWN_CHARS)).join(', ');
  const didYouMean = close.length > 0 ? ` — did you mean ${shown(close)}?` : '';
  const all = known.length > 0 ? ` Its engines: ${shown(named)}.` : ` ${reply.name(project)} has no engine figures yet.`;
  return {
    refusal:
      `No engine named ${reply.quoted(first)} in ${reply.name(project)}${didYouMean}${all} ` +
      `Nothing was changed: a filter naming it would leave this channel without ${reply.name(project)}'s engines.`,
  };
}

/** The engines of each project's stored snapshot (the engines its last digested run reported). */
export function enginesFromSnapshots(store: Pick<DigestStore, 'getSnapshot'>): ProjectEngines {
  return {
    enginesOf: async (projectId) => {
      const snapshot = await store.getSnapshot(projectId);
      return snapshot === null ? undefined : Object.keys(snapshot.engines ?? {});
    },
  };
}

/** What the channel's history names for a change of its quiet hours ("set *quiet hours* to 22:00–07:00 …"). */
const QUIET_HOURS_SUBJECT = { id: '*', name: 'quiet hours' };

/** `quiet <window> [tz]` / `quiet off`: the channel's window, in the typed zone or the stage's. */
export async function answerQuiet(command: CommandOf<'quiet'>, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  const quiet = deps.quietHours;
  if (quiet === undefined) return reply.ephemeral("Quiet hours aren't set up on this bridge (its operator can deploy them).");
  const refused = await refusedChannelWide(context.channel, deps);
  if (refused !== null) return refused;
  const nowMs = deps.clock.now();
  const window = command.window === null ? null : { ...command.window, timeZone: command.window.timeZone ?? quiet.defaultTimeZone };
  await quiet.store.setWindow(context.channel, window, context.actor, nowMs);
  // The history shows the subject after the first word: "set *quiet hours* to …", "turned *quiet hours* off".
  const what = window === null ? 'turned off' : `set to ${describeWindow(window)}`;
  const recorded = await recordChange(deps, context.channel, { actor: context.actor, whenMs: nowMs, what, project: QUIET_HOURS_SUBJECT });
  const who = reply.mention(context.actor.userId);
  const text =
    window === null
      ? `${who} ended this channel's quiet hours: digests are posted as they come, and any held ones follow within minutes.`
      : `🌙 ${who} set quiet hours here: ${serviceText(describeWindow(window), SHOWN_CHARS)}. ` +
        `Digests in that window are held and posted as one catch-up when it ends` +
        `${isQuietAt(window, nowMs) ? ` (now quiet until ${reply.slackDate(quietEndsAt(window, nowMs))})` : ''}. \`${COMMAND} quiet off\` ends them.`;
  return reply.inChannel(`${text}${recorded ? '' : reply.NOT_RECORDED_NOTE}`);
}

/** `list`'s line about the channel's quiet hours; undefined when none are set (or they can't be read: `list` still answers). */
export async function quietHoursLine(channel: string, deps: Pick<InlineDeps, 'quietHours' | 'log' | 'clock'>): Promise<string | undefined> {
  if (deps.quietHours === undefined) return undefined;
  try {
    const setting = (await deps.quietHours.store.windowsOf([channel])).get(channel);
    if (setting === undefined) return undefined;
    const now = isQuietAt(setting.window, deps.clock.now()) ? ' — quiet now, digests are held' : '';
    return `🌙 *Quiet hours* ${serviceText(describeWindow(setting.window), SHOWN_CHARS)}${now} (set by ${reply.mention(setting.setBy)} ${reply.slackDate(setting.setAtMs)})`;
  } catch (error) {
    deps.log.warn('quiet hours could not be read for list', { channel, error: error instanceof Error ? error.name : 'unknown' });
    return undefined;
  }
}

/** The reply with one more section before its "Share in channel" button (and in its text). */
export function withSection(answer: SlackReply, section: string | undefined): SlackReply {
  if (section === undefined) return answer;
  const blocks = [...(answer.blocks ?? [])];
  const at = blocks.findIndex((b) => typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'actions');
  blocks.splice(at < 0 ? blocks.length : at, 0, { type: 'section', text: { type: 'mrkdwn', text: section } });
  return { ...answer, text: `${answer.text}\n\n${section}`, blocks };
}

/**
 * `/visibility weekly on|off|<day> <HH:MM> [tz]`: a channel's weekly report schedule. A change
 * (the stage's `slackAccess` decides who, at the endpoint), answered inline (one GetItem and one
 * UpdateItem), announced in the channel and appended to its history like every other change.
 */
import { slackDate } from '../digest/render/format';
import { recordChange, refusedChannelWide } from './access';
import type { CommandArgs, CommandContext, InlineDeps, SlackReply } from './ports';
import * as reply from './replies';
import { quotedInput } from '../slack-text';
import type { IsoWeekday, WeeklySetting } from '../weekly/ports';
import { canonicalZone, describeSchedule, effectiveSchedule, isTimeZone, nextOccurrence, parseDay, parseTime } from '../weekly/schedule';

export type WeeklyArgs = CommandArgs['weekly'];

/** How the channel history names the weekly report (it has no project). */
export const WEEKLY_HISTORY_SUBJECT = { id: 'weekly', name: 'weekly report' } as const;

export const WEEKLY_USAGE = 'on|off|<day> <HH:MM> [time zone]';

export function parseWeekly(args: readonly string[]): { ok: true; args: WeeklyArgs } | { ok: false; problem: string } {
  const [first = '', second, third, ...rest] = args;
  const word = first.toLowerCase();
  if (args.length === 1 && (word === 'on' || word === 'off')) return { ok: true, args: { action: word } };
  const day = parseDay(first);
  if (day === undefined)
    return { ok: false, problem: 'say `on`, `off`, or a day and a time, e.g. `weekly monday 09:00` or `weekly fri 17:30 Europe/Berlin`' };
  const minuteOfDay = second === undefined ? undefined : parseTime(second);
  if (minuteOfDay === undefined) return { ok: false, problem: 'give the time as HH:MM (24-hour), e.g. `09:00` or `17:30`' };
  if (rest.length > 0) return { ok: false, problem: 'one time zone at most, e.g. `Europe/Berlin` or `UTC`' };
  if (third !== undefined && !isTimeZone(third))
    return {
      ok: false,
      problem: `${quotedInput(third)} is not a time zone: use an IANA name such as Europe/Berlin, America/New_York or UTC`,
    };
  return { ok: true, args: { action: 'at', day, minuteOfDay, timeZone: third === undefined ? undefined : canonicalZone(third) } };
}

function nextSetting(args: WeeklyArgs, before: WeeklySetting | undefined, actor: string, nowMs: number): WeeklySetting {
  const changed = { changedBy: actor, changedAtMs: nowMs };
  if (args.action === 'off') return { ...before, enabled: false, ...changed };
  if (args.action === 'on') return { ...before, enabled: true, ...changed };
  return { enabled: true, day: args.day as IsoWeekday, minuteOfDay: args.minuteOfDay, timeZone: args.timeZone, ...changed };
}

/** The handler of the `weekly` verb. */
export async function answerWeekly(
  command: { kind: 'weekly' } & WeeklyArgs,
  context: CommandContext,
  deps: InlineDeps,
): Promise<SlackReply> {
  const weekly = deps.weekly;
  if (weekly === undefined) return reply.ephemeral('Weekly reports are not set up in this deployment.');
  const refused = await refusedChannelWide(context.channel, deps);
  if (refused !== null) return refused;
  const nowMs = deps.clock.now();
  const settings = await weekly.store.settings();
  const setting = nextSetting(command, settings.get(context.channel), context.actor.userId, nowMs);
  await weekly.store.putSetting(context.channel, setting);
  const schedule = effectiveSchedule(setting, weekly.timeZone);
  const what = setting.enabled ? (command.action === 'on' ? 'turned on' : `set to ${describeSchedule(schedule)}`) : 'turned off';
  const recorded = await recordChange(deps, context.channel, {
    actor: context.actor,
    whenMs: nowMs,
    what,
    project: WEEKLY_HISTORY_SUBJECT,
  });
  const who = reply.mention(context.actor.userId);
  const text = setting.enabled
    ? `${who} set this channel's weekly report to ${describeSchedule(schedule)}: the next one is due ${slackDate(new Date(nextOccurrence(schedule, nowMs)).toISOString())}.`
    : `${who} turned this channel's weekly report off (\`/visibility weekly on\` turns it back on).`;
  return reply.inChannel(`${text}${recorded ? '' : reply.NOT_RECORDED_NOTE}`);
}

/**
 * The `/visibility` command table: each verb's argument parser, usage line, help line, whether it is
 * answered inline or deferred, and its handler. Help, usage replies, "did you mean" and the app
 * manifest's `usage_hint` are generated from it. Adding a verb is one entry in CommandArgs
 * (./ports.ts) and one here (with its handler in ./handlers.ts): a missing entry fails `tsc`.
 *
 * Parsing never throws: bad input becomes `invalid` (known verb, bad arguments: the reply shows its
 * usage) or `unknown` (with a "did you mean").
 */
import { DIGEST_MODES, SLACK_APP_DEFAULTS } from '../contracts';
import { DURATION_EXAMPLES, trailingDuration, type Duration } from '../duration';
import { quotedInput } from '../slack-text';
import { answerList, answerProjects, answerStatus, answerSubscribe, changeSubscription } from './handlers';
import { editDistance } from './project-match';
import { answerFilter, answerQuiet, parseFilter, parseQuiet } from './channel-settings';
import { answerWeekly, parseWeekly, WEEKLY_USAGE } from './weekly-command';
import type {
  CommandArgs,
  CommandContext,
  CommandOf,
  CommandVerb,
  DeferredDeps,
  DeferredVerb,
  InlineDeps,
  SlackReply,
  VerbAccess,
  VisibilityCommand,
} from './ports';
import * as reply from './replies';

export interface SlashCommandRequest {
  command: string;
  text: string;
  channelId: string;
  userId: string;
  userName: string;
  responseUrl: string;
  triggerId: string;
  teamId: string;
  /** The Grid org of the team, when it has one: a connection linked to the org reaches its every team. */
  enterpriseId?: string | undefined;
}

export type SlashCommandParse = { ok: true; request: SlashCommandRequest } | { ok: false; problem: string };

/** Fields Slack always sends with a slash command; without them nothing can be answered. */
const REQUIRED_FIELDS = ['command', 'channel_id', 'user_id', 'response_url'] as const;

export function parseSlashCommandForm(rawBody: string): SlashCommandParse {
  const form = new URLSearchParams(rawBody);
  const missing = REQUIRED_FIELDS.filter((field) => !form.get(field));
  if (missing.length > 0) return { ok: false, problem: `slash command body lacks ${missing.join(', ')}` };
  const field = (name: string) => form.get(name) ?? '';
  return {
    ok: true,
    request: {
      command: field('command'),
      text: field('text'),
      channelId: field('channel_id'),
      userId: field('user_id'),
      userName: field('user_name'),
      responseUrl: field('response_url'),
      triggerId: field('trigger_id'),
      teamId: field('team_id'),
      ...(field('enterprise_id') === '' ? {} : { enterpriseId: field('enterprise_id') }),
    },
  };
}

// --- The table -----------------------------------------------------------------------------------

/** The arguments parsed, or the problem shown with the verb's usage. */
type ArgsParse<V extends CommandVerb> = { ok: true; args: CommandArgs[V] } | { ok: false; problem: string };

interface CommandSpecBase<V extends CommandVerb> {
  /** The arguments as the usage line shows them ('' for none). */
  usage: string;
  /** What the verb does, for `help`. */
  help: string;
  /**
   * `read`: open to every member, answered ephemerally; `change`: changes subscriptions, so the
   * stage's `slackAccess` policy decides who (at the endpoint) and where (once the project is known).
   */
  access: VerbAccess;
  /** Shown in the app manifest's usage_hint (Slack shows it while typing). */
  inUsageHint?: true | undefined;
  parse(args: readonly string[]): ArgsParse<V>;
}

/** Answered in the acknowledgement (DynamoDB only: within Slack's 3 s). */
interface InlineSpec<V extends CommandVerb> extends CommandSpecBase<V> {
  deferred: false;
  answer(command: CommandOf<V>, context: CommandContext, deps: InlineDeps): Promise<SlackReply>;
}

/** Acknowledged at once, queued whole, answered via response_url by the digest function. */
interface DeferredSpec<V extends CommandVerb> extends CommandSpecBase<V> {
  deferred: true;
  /** The acknowledgement shown while the answer is worked out. */
  ack(command: CommandOf<V>): string;
  /** The argument words `parse` reads back into the same command: how the worker checks a queued one. */
  words(command: CommandOf<V>): string[];
  answer(command: CommandOf<V>, context: CommandContext, deps: DeferredDeps): Promise<SlackReply>;
}

type CommandTable = { readonly [V in CommandVerb]: V extends DeferredVerb ? DeferredSpec<V> : InlineSpec<V> };

const none = () => ({ ok: true as const, args: {} });

export const COMMANDS: CommandTable = {
  subscribe: {
    usage: '<project name or id>',
    help: "post this project's digests here",
    access: 'change',
    inUsageHint: true,
    parse: projectOnly,
    deferred: true,
    ack: lookingUp,
    words: (command) => [command.project],
    answer: answerSubscribe,
  },
  unsubscribe: {
    usage: '<project>',
    help: 'stop posting them here',
    access: 'change',
    parse: projectOnly,
    deferred: false,
    answer: changeSubscription,
  },
  list: {
    usage: '',
    help: "this channel's subscriptions, their settings and recent changes",
    access: 'read',
    inUsageHint: true,
    parse: none,
    deferred: false,
    answer: (_command, context, deps) => answerList(context, deps),
  },
  projects: {
    usage: '',
    help: 'the projects the bridge can see',
    access: 'read',
    parse: none,
    deferred: true,
    ack: () => 'Asking the service for its projects…',
    words: () => [],
    answer: (_command, context, deps) => answerProjects(context, deps),
  },
  status: {
    usage: '<project>',
    help: 'the current figures, now',
    access: 'read',
    inUsageHint: true,
    parse: projectOnly,
    deferred: true,
    ack: lookingUp,
    words: (command) => [command.project],
    answer: answerStatus,
  },
  mute: {
    usage: '<project> <duration: 30m, 12h, 7d, 7 days, 1 week>',
    help: 'skip digests here for a while',
    access: 'change',
    parse: parseMute,
    deferred: false,
    answer: changeSubscription,
  },
  unmute: { usage: '<project>', help: 'end a mute', access: 'change', parse: projectOnly, deferred: false, answer: changeSubscription },
  mode: {
    usage: '<project> full|changes',
    help: '`full` every digest, `changes` one line when nothing moved',
    access: 'change',
    parse: parseMode,
    deferred: false,
    answer: changeSubscription,
  },
  weekly: {
    usage: WEEKLY_USAGE,
    help: "this channel's weekly report (default Monday 09:00): on, off, or a day and time",
    access: 'change',
    parse: parseWeekly,
    deferred: false,
    answer: answerWeekly,
  },
  filter: {
    usage: '<project> engines=ChatGPT,Claude | alerts>=warning | min-change=<pts> | off',
    help: 'only those engines, alerts at or above a level, changes of at least that size here (combinable)',
    access: 'change',
    parse: parseFilter,
    deferred: false,
    answer: answerFilter,
  },
  quiet: {
    usage: '<HH:MM-HH:MM> [time zone] | off',
    help: "hold this channel's digests in that window daily, then post one catch-up",
    access: 'change',
    parse: parseQuiet,
    deferred: false,
    answer: answerQuiet,
  },
  help: {
    usage: '',
    help: 'this text',
    access: 'read',
    inUsageHint: true,
    parse: none,
    deferred: false,
    answer: () => Promise.resolve(reply.helpReply(helpLines())),
  },
};

export const COMMAND_VERBS = Object.keys(COMMANDS) as CommandVerb[];

/** The verb's column: whether it reads or changes. */
export function accessOf(verb: CommandVerb): VerbAccess {
  return COMMANDS[verb].access;
}

const COMMAND = SLACK_APP_DEFAULTS.command;

/** `subscribe <project name or id>`: the verb and its arguments. */
export function usageOf(verb: CommandVerb): string {
  const { usage } = COMMANDS[verb];
  return usage === '' ? verb : `${verb} ${usage}`;
}

function helpLines(): string[] {
  return COMMAND_VERBS.map((verb) => `• \`${COMMAND} ${usageOf(verb)}\` — ${COMMANDS[verb].help}`);
}

/** The manifest's usage_hint: the verbs most reached for. */
export function usageHint(): string {
  return COMMAND_VERBS.filter((verb) => COMMANDS[verb].inUsageHint)
    .map(usageOf)
    .join(' | ');
}

// --- Parsing -------------------------------------------------------------------------------------

function isVerb(word: string): word is CommandVerb {
  return Object.hasOwn(COMMANDS, word);
}

export function parseCommandText(text: string): VisibilityCommand {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  const [first, ...rest] = words;
  if (first === undefined) return { kind: 'help' };
  const verb = first.toLowerCase();
  if (!isVerb(verb)) return { kind: 'unknown', verb: first, suggestion: suggestVerb(verb) };
  return parseVerb(verb, rest);
}

function parseVerb<V extends CommandVerb>(verb: V, args: readonly string[]): VisibilityCommand {
  const parsed = (COMMANDS[verb] as CommandSpecBase<V>).parse(args);
  if (!parsed.ok) return { kind: 'invalid', verb, problem: parsed.problem };
  // TypeScript does not correlate V across the union: the arguments are the parse of the same verb.
  return { kind: verb, ...parsed.args } as VisibilityCommand;
}

const NAME_THE_PROJECT = 'name the project (its name or id)';

function projectOnly(args: readonly string[]): ArgsParse<'subscribe'> {
  const project = projectArgument(args);
  return project === '' ? { ok: false, problem: NAME_THE_PROJECT } : { ok: true, args: { project } };
}

/** Project names may have spaces; surrounding quotes (straight or curly, as Slack sends them) are dropped. */
function projectArgument(words: readonly string[]): string {
  return words
    .join(' ')
    .replace(/^["'“‘]+|["'”’]+$/g, '')
    .trim();
}

function parseMute(args: readonly string[]): ArgsParse<'mute'> {
  if (args.length < 2) return { ok: false, problem: 'name the project and how long, e.g. `mute Northwind 7d` or `mute Northwind 2 weeks`' };
  const found = trailingDuration(args, MUTE_UNITS);
  if (!found.ok) return { ok: false, problem: notADuration(found.text) };
  const bounded = boundedMute(found.duration);
  if (!bounded.ok) return bounded;
  const project = projectArgument(found.before);
  if (project === '') return { ok: false, problem: NAME_THE_PROJECT };
  return { ok: true, args: { project, durationMs: bounded.ms, durationLabel: bounded.label } };
}

export const MIN_MUTE_MS = 60_000;
export const MAX_MUTE_MS = 90 * 24 * 3600_000;
/** Whole minutes, hours, days or weeks: a mute of seconds or of 1.5h is a typo. */
const MUTE_UNITS = { units: ['m', 'h', 'd', 'w'], fractions: false } as const;

type MuteDuration = { ok: true; ms: number; label: string } | { ok: false; problem: string };

function notADuration(text: string): string {
  return `${quotedInput(text)} is not a duration: write a whole number and a unit, e.g. ${DURATION_EXAMPLES}`;
}

/** Mute durations: a whole number of minutes, hours, days or weeks (30m, 12h, 7d, `7 days`, `1 week`), bounded. */
export function parseMuteDuration(text: string): MuteDuration {
  const found = trailingDuration([text], MUTE_UNITS);
  return found.ok ? boundedMute(found.duration) : { ok: false, problem: notADuration(found.text) };
}

function boundedMute(duration: Duration): MuteDuration {
  if (duration.ms < MIN_MUTE_MS) return { ok: false, problem: 'a mute lasts at least 1m' };
  if (duration.ms > MAX_MUTE_MS) return { ok: false, problem: 'a mute lasts at most 90d (use `unsubscribe` to stop digests for good)' };
  return { ok: true, ms: duration.ms, label: `${duration.count}${duration.unit}` };
}

function parseMode(args: readonly string[]): ArgsParse<'mode'> {
  const last = args.at(-1)?.toLowerCase();
  const mode = DIGEST_MODES.find((m) => m === last);
  if (args.length < 2 || mode === undefined)
    return { ok: false, problem: 'end with `full` (every digest) or `changes` (one line when nothing moved)' };
  const project = projectArgument(args.slice(0, -1));
  if (project === '') return { ok: false, problem: NAME_THE_PROJECT };
  return { ok: true, args: { project, mode } };
}

/** The acknowledgement echoes what was typed, sanitized like every other text the bridge writes. */
function lookingUp(command: { project: string }): string {
  return `Looking up ${reply.quoted(command.project)}…`;
}

/** The closest verb within two edits, so a typo gets "did you mean `subscribe`?". */
export function suggestVerb(word: string): CommandVerb | undefined {
  let best: { verb: CommandVerb; distance: number } | undefined;
  for (const verb of COMMAND_VERBS) {
    const distance = editDistance(word.toLowerCase(), verb);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { verb, distance };
  }
  return best?.verb;
}

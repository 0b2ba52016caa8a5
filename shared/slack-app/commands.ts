/**
 * One parse per input: a slash command's form body into a typed request, and its text into a
 * typed `/visibility` command. Never throws; bad input becomes `invalid` (known verb, bad
 * arguments: the reply shows its usage) or `unknown` (with a "did you mean").
 */
import { DIGEST_MODES, type DigestMode } from './ports';
import { parseDuration } from './duration';

export interface SlashCommandRequest {
  command: string;
  text: string;
  channelId: string;
  userId: string;
  userName: string;
  responseUrl: string;
  triggerId: string;
  teamId: string;
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
    },
  };
}

export type VisibilityCommand =
  | { kind: 'subscribe'; project: string }
  | { kind: 'unsubscribe'; project: string }
  | { kind: 'list' }
  | { kind: 'projects' }
  | { kind: 'status'; project: string }
  | { kind: 'mute'; project: string; durationMs: number; durationLabel: string }
  | { kind: 'unmute'; project: string }
  | { kind: 'mode'; project: string; mode: DigestMode }
  | { kind: 'help' }
  | { kind: 'invalid'; verb: CommandVerb; problem: string }
  | { kind: 'unknown'; verb: string; suggestion?: CommandVerb | undefined };

export const COMMAND_USAGE = {
  subscribe: 'subscribe <project name or id>',
  unsubscribe: 'unsubscribe <project>',
  list: 'list',
  projects: 'projects',
  status: 'status <project>',
  mute: 'mute <project> <duration: 30m, 2h, 7d, 1w>',
  unmute: 'unmute <project>',
  mode: 'mode <project> full|changes',
  help: 'help',
} as const;
export type CommandVerb = keyof typeof COMMAND_USAGE;
export const COMMAND_VERBS = Object.keys(COMMAND_USAGE) as CommandVerb[];

function isVerb(word: string): word is CommandVerb {
  return Object.hasOwn(COMMAND_USAGE, word);
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

function parseVerb(verb: CommandVerb, args: string[]): VisibilityCommand {
  switch (verb) {
    case 'help':
    case 'list':
    case 'projects':
      return { kind: verb };
    case 'subscribe':
    case 'unsubscribe':
    case 'status':
    case 'unmute':
      return withProject(verb, args, (project) => ({ kind: verb, project }));
    case 'mute':
      return parseMute(args);
    case 'mode':
      return parseMode(args);
  }
}

function withProject(verb: CommandVerb, args: string[], build: (project: string) => VisibilityCommand): VisibilityCommand {
  const project = projectArgument(args);
  if (project === '') return { kind: 'invalid', verb, problem: 'name the project (its name or id)' };
  return build(project);
}

/** Project names may have spaces; surrounding quotes (straight or curly, as Slack sends them) are dropped. */
function projectArgument(words: string[]): string {
  return words
    .join(' ')
    .replace(/^["'“‘]+|["'”’]+$/g, '')
    .trim();
}

function parseMute(args: string[]): VisibilityCommand {
  const last = args.at(-1);
  if (args.length < 2 || last === undefined)
    return { kind: 'invalid', verb: 'mute', problem: 'name the project and how long, e.g. `mute Northwind 7d`' };
  const duration = parseDuration(last);
  if (!duration.ok) return { kind: 'invalid', verb: 'mute', problem: duration.problem };
  return withProject('mute', args.slice(0, -1), (project) => ({
    kind: 'mute',
    project,
    durationMs: duration.ms,
    durationLabel: duration.label,
  }));
}

function parseMode(args: string[]): VisibilityCommand {
  const last = args.at(-1)?.toLowerCase();
  const mode = DIGEST_MODES.find((m) => m === last);
  if (args.length < 2 || mode === undefined)
    return { kind: 'invalid', verb: 'mode', problem: 'end with `full` (every digest) or `changes` (one line when nothing moved)' };
  return withProject('mode', args.slice(0, -1), (project) => ({ kind: 'mode', project, mode }));
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

/** Levenshtein distance, capped input length so a pasted essay costs nothing. */
export function editDistance(a: string, b: string): number {
  const left = a.slice(0, 64);
  const right = b.slice(0, 64);
  let previous = Array.from({ length: right.length + 1 }, (_, i) => i);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}

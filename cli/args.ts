/**
 * Argument parsing on commander (strict: unknown options are usage errors, with "did you mean"), plus the
 * value parsers the commands share (durations, counts) and the per-run command context.
 */
import type { ParseArgsConfig } from 'node:util';
import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_STACK, describeStackWithSdk, StackOutputs, type AwsService, type AwsSettings } from './aws';
import { UsageError } from './errors';
import { CLI_ENV, defaultSleep, Output, type CliIo } from './io';
import { findDefaultReadyFile, readReadyFile, type LocalReady } from './ready-file';
import { relative } from 'node:path';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
type Value = string | boolean | (string | boolean)[] | undefined;

export interface Parsed {
  command: string;
  values: Record<string, Value>;
  positionals: string[];
}

export const OUTPUT_OPTIONS: OptionSpec = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export const AWS_OPTIONS: OptionSpec = {
  stack: { type: 'string' },
  region: { type: 'string' },
  local: { type: 'string' },
  'endpoint-sqs': { type: 'string' },
  'endpoint-dynamodb': { type: 'string' },
  'endpoint-secretsmanager': { type: 'string' },
  'endpoint-cloudformation': { type: 'string' },
};

/**
 * The parser may take `--age -30` for two options (a value that starts with a dash); join such pairs into
 * `--age=-30` for string options when the value is a negative number.
 */
function joinNegativeValues(argv: readonly string[], options: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (arg.startsWith('--') && !arg.includes('=') && options[arg.slice(2)]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i += 1;
    } else {
      out.push(arg);
    }
  }
  return out;
}

function commanderOption(name: string, spec: OptionSpec[string]): Option {
  const flags = `${spec.short !== undefined ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ' <value>' : ''}`;
  const option = new Option(flags);
  if (spec.multiple === true)
    option.argParser((value: string, previous: unknown) => [...(Array.isArray(previous) ? (previous as string[]) : []), value]);
  return option;
}

/** A throwaway commander program that reports problems by throwing instead of exiting. */
function quietProgram(name: string): { program: Command; errors: () => string } {
  let errors = '';
  const program = new Command(name)
    .exitOverride()
    .showSuggestionAfterError(true)
    .helpOption(false)
    .configureOutput({ writeErr: (text) => (errors += text), writeOut: () => undefined, outputError: (text) => (errors += text) });
  return { program, errors: () => errors };
}

/** commander's "error: unknown option '--x'\n(Did you mean --y?)" as one line that says what to fix. */
function usageMessage(text: string): string {
  const [first = 'bad arguments', ...rest] = text.trim().split('\n');
  const hint = rest.join(' ').replace(/^\(Did you mean (.*)\?\)$/, 'did you mean $1?');
  const message = first
    .replace(/^error: /, '')
    .replace(/^unknown option '([^']+)'$/, 'unknown option $1')
    .replace(
      /^option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument missing$/,
      '$1 needs a value (write $1=VALUE for a value starting with "-")',
    )
    .replace(/^unknown command '([^']+)'$/, 'unknown command "$1"');
  return hint === '' ? message : `${message} (${hint})`;
}

/** Parses a command's flags with commander: strict (unknown options are usage errors, with a suggestion). */
export function parse(command: string, argv: readonly string[], options: OptionSpec): Parsed {
  const spec: OptionSpec = { ...OUTPUT_OPTIONS, ...options };
  const { program, errors } = quietProgram(`bridge ${command}`);
  const names = new Map<string, string>();
  for (const [name, optionSpec] of Object.entries(spec)) {
    const option = commanderOption(name, optionSpec);
    names.set(option.attributeName(), name);
    program.addOption(option);
  }
  program.argument('[args...]').allowExcessArguments(true);
  try {
    program.parse(joinNegativeValues(argv, spec), { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new UsageError(usageMessage(errors() || err.message), command);
    throw err;
  }
  const values: Record<string, Value> = {};
  for (const [key, value] of Object.entries(program.opts<Record<string, Value>>())) values[names.get(key) ?? key] = value;
  return { command, values, positionals: [...program.args] };
}

/** Names a similar one from `candidates` (commander's suggestion), as " (did you mean X?)" or "". */
export function suggest(word: string, candidates: readonly string[]): string {
  const { program, errors } = quietProgram('bridge');
  for (const candidate of candidates) program.command(candidate);
  try {
    program.parse([word], { from: 'user' });
  } catch {
    // The unknown command is the point: its message carries the suggestion.
  }
  const match = /Did you mean (.*)\?/.exec(errors());
  return match === null ? '' : ` (did you mean ${match[1] ?? ''}?)`;
}

export function str(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`--${name} needs a value`, parsed.command);
  return trimmed;
}

export function strs(parsed: Parsed, name: string): string[] {
  const value = parsed.values[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function bool(parsed: Parsed, name: string): boolean {
  return parsed.values[name] === true;
}

/** An integer option in [min, max]. */
export function int(parsed: Parsed, name: string, min: number, max: number): number | undefined {
  const raw = str(parsed, name);
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`, parsed.command);
  const value = Number(raw);
  if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`, parsed.command);
  return value;
}

/** A positive number (fractions allowed), e.g. --silence-hours 0.5. */
export function positiveNumber(parsed: Parsed, name: string): number | undefined {
  const raw = str(parsed, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0)) throw new UsageError(`--${name} must be a positive number, got "${raw}"`, parsed.command);
  return value;
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "2h", "1d", "1.5h" → milliseconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([smhd])$/i.exec(text.trim());
  if (match === null) return undefined;
  const unit = DURATION_UNITS[(match[2] ?? '').toLowerCase()];
  return unit === undefined ? undefined : Number(match[1]) * unit;
}

export function duration(parsed: Parsed, name: string): number | undefined {
  const raw = str(parsed, name);
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === undefined) throw new UsageError(`--${name} must be a duration like 90s, 30m, 2h or 1d, got "${raw}"`, parsed.command);
  return ms;
}

/** "3m" style rendering of a span, for ages. */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 === 0 ? '' : `${s % 60}s`}`;
  if (s < 86_400) {
    const m = Math.floor((s % 3600) / 60);
    return `${Math.floor(s / 3600)}h${m === 0 ? '' : `${m}m`}`;
  }
  const h = Math.floor((s % 86_400) / 3600);
  return `${Math.floor(s / 86_400)}d${h === 0 ? '' : `${h}h`}`;
}

// ---------------------------------------------------------------------------------------------
// Command context
// ---------------------------------------------------------------------------------------------

export interface CommandContext {
  io: CliIo;
  out: Output;
  env: Readonly<Record<string, string | undefined>>;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  fetch: typeof fetch;
  settings: AwsSettings;
  /** The local stack's ready file when --local was given. */
  local: LocalReady | undefined;
  stack: StackOutputs;
  /** A copy-pasteable command line for `words` (e.g. 'dlq peek') against the same stack. */
  hint: (words: string) => string;
}

/**
 * Whether a command only reads a stack, or sends or changes something. A changing command never falls
 * back to the default stack: an operator with credentials in the shell must name the stack to touch it.
 */
export type StackAccess = 'read' | 'change';

/** The deployed stack a command would use, and who chose it. */
interface StackChoice {
  name: string;
  source: 'flag' | 'env' | 'default';
}

function stackChoice(parsed: Parsed, env: Readonly<Record<string, string | undefined>>): StackChoice {
  const flag = str(parsed, 'stack');
  if (flag !== undefined) return { name: flag, source: 'flag' };
  const fromEnv = env[CLI_ENV.stack]?.trim();
  if (fromEnv !== undefined && fromEnv !== '') return { name: fromEnv, source: 'env' };
  return { name: DEFAULT_STACK, source: 'default' };
}

/** The words that tell an operator how to pick a target, in every refusal. */
export const NAME_A_STACK = 'start `npm start`, or name the stack with --stack NAME (or set BRIDGE_STACK)';

/**
 * Runs before the first stack look-up: a changing command refuses a stack nobody named (usage, exit
 * 2); otherwise the command says on stderr which stack it reads, since that is not always obvious.
 */
function stackGuard(choice: StackChoice, access: StackAccess, command: string, io: CliIo): () => void {
  return () => {
    if (access === 'change' && choice.source === 'default')
      throw new UsageError(
        `no stack named and no local stack running: \`${command}\` sends or changes something, so it never picks a deployed stack by itself; ${NAME_A_STACK}`,
        command,
      );
    const why = choice.source === 'flag' ? '--stack' : choice.source === 'env' ? 'BRIDGE_STACK' : 'the default; --stack NAME picks another';
    io.stderr.write(`using stack ${choice.name} (${why})\n`);
  };
}

/**
 * The ready file a command uses: --local's, else the default one when no stack was named on the command
 * line and `npm start` runs. A running local stack wins over BRIDGE_STACK (a shell default), never over --stack.
 */
async function localReady(parsed: Parsed, io: CliIo): Promise<{ ready: LocalReady | undefined; explicit: boolean }> {
  const localPath = str(parsed, 'local');
  if (localPath !== undefined) return { ready: await readReadyFile(localPath), explicit: true };
  if (str(parsed, 'stack') !== undefined || io.defaultReadyFile === undefined) return { ready: undefined, explicit: false };
  const ready = await findDefaultReadyFile(io.defaultReadyFile);
  if (ready !== undefined)
    io.stderr.write(`using the local stack of \`npm start\` (${displayPath(ready.path)}); pass --stack NAME for a deployed one\n`);
  return { ready, explicit: false };
}

/** A path relative to the working directory when it is below it, else as given. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/**
 * `npx bridge <words>` with the flags that pick the same stack this command ran against (a stack from
 * BRIDGE_STACK is spelled out, so the hint works in another shell too).
 */
function hintFor(parsed: Parsed, explicitLocal: boolean, envStack: string | undefined): (words: string) => string {
  const flags: string[] = [];
  const local = str(parsed, 'local');
  if (explicitLocal && local !== undefined) flags.push(`--local ${shellQuote(local)}`);
  const stack = str(parsed, 'stack') ?? envStack;
  if (stack !== undefined) flags.push(`--stack ${shellQuote(stack)}`);
  const region = str(parsed, 'region');
  if (region !== undefined) flags.push(`--region ${shellQuote(region)}`);
  return (words) => ['npx bridge', words, ...flags].join(' ');
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

export async function buildContext(
  parsed: Parsed,
  io: CliIo,
  extraEndpoints: Partial<Record<AwsService, string>> = {},
  access: StackAccess = 'read',
): Promise<CommandContext> {
  const env = io.env ?? process.env;
  const endpoints: Partial<Record<AwsService, string>> = { ...extraEndpoints };
  const pairs: [AwsService, string][] = [
    ['sqs', 'endpoint-sqs'],
    ['dynamodb', 'endpoint-dynamodb'],
    ['secretsmanager', 'endpoint-secretsmanager'],
    ['cloudformation', 'endpoint-cloudformation'],
  ];
  for (const [service, flag] of pairs) {
    const value = str(parsed, flag);
    if (value !== undefined) endpoints[service] = value;
  }
  const { ready: local, explicit } = await localReady(parsed, io);
  if (local !== undefined) {
    const fromReady: [AwsService, string | undefined][] = [
      ['sqs', local.sqsEndpoint],
      ['dynamodb', local.dynamoEndpoint],
      ['secretsmanager', local.secretsManagerEndpoint],
    ];
    for (const [service, value] of fromReady) if (endpoints[service] === undefined && value !== undefined) endpoints[service] = value;
  }
  const settings: AwsSettings = { region: str(parsed, 'region') ?? local?.region, endpoints, env };
  const choice = stackChoice(parsed, env);
  return {
    io,
    out: new Output(io, bool(parsed, 'json')),
    env,
    now: io.now ?? Date.now,
    sleep: io.sleep ?? defaultSleep,
    fetch: io.fetch ?? globalThis.fetch,
    settings,
    local,
    stack: new StackOutputs(
      choice.name,
      settings,
      io.describeStack ?? describeStackWithSdk,
      stackGuard(choice, access, parsed.command, io),
    ),
    hint: hintFor(parsed, explicit, local === undefined && choice.source === 'env' ? choice.name : undefined),
  };
}

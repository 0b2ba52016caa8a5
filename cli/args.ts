/**
 * The option values a handler reads (durations, counts, strings) from the parsed command line, the
 * options many commands share, and the per-run command context.
 */
import { describeStackWithSdk, StackOutputs, type AwsService, type AwsSettings } from './aws';
import type { OptionDefs, Parsed } from './command-spec';
import { UsageError } from './errors';
import { CLI_ENV, defaultSleep, Output, type CliIo } from './io';
import { findDefaultReadyFile, readReadyFile, shortPath, type LocalReady } from './ready-file';
import { HANDLED_EVENT_TYPES, isHandledEventType, type HandledEventType } from '../shared/events';
import { DURATION_EXAMPLES, parseDuration } from '../shared/duration';

export type { Parsed } from './command-spec';

/** The options of every command that reads or changes a stack (explained once, in `npx bridge help environment`). */
export const AWS_OPTIONS: OptionDefs = {
  stack: { value: 'NAME', help: 'the deployed stack to use (its outputs name the queues, table, secrets…)', listedOnce: true },
  region: { value: 'REGION', help: 'AWS region (default: AWS_REGION / your profile)', listedOnce: true },
  local: {
    value: 'READY_FILE',
    help: 'use the local stack (`npm start`) described by its ready file (default: .local/ready.json or BRIDGE_READY_FILE when that stack runs and no --stack is given)',
    listedOnce: true,
  },
  'endpoint-sqs': { value: 'URL', help: 'SQS endpoint (also AWS_ENDPOINT_URL_SQS)', listedOnce: true },
  'endpoint-dynamodb': { value: 'URL', help: 'DynamoDB endpoint (also AWS_ENDPOINT_URL_DYNAMODB)', listedOnce: true },
  'endpoint-secretsmanager': { value: 'URL', help: 'Secrets Manager endpoint (also AWS_ENDPOINT_URL_SECRETS_MANAGER)', listedOnce: true },
  'endpoint-cloudformation': { value: 'URL', help: 'CloudFormation endpoint (also AWS_ENDPOINT_URL_CLOUDFORMATION)', listedOnce: true },
};

/** The nearest of `candidates` to a mistyped `word`, as " (did you mean X?)", or "". */
export function didYouMean(word: string, candidates: readonly string[]): string {
  // Options are compared without their dashes, so `--x` is not near every short flag.
  const bare = (text: string): string => (word.startsWith('--') && text.startsWith('--') ? text.slice(2) : text);
  let best: string[] = [];
  let bestDistance = 3;
  for (const candidate of new Set(candidates)) {
    if (bare(candidate).length <= 1) continue;
    const distance = editDistance(bare(word), bare(candidate));
    const length = Math.max(bare(word).length, bare(candidate).length);
    if ((length - distance) / length <= 0.4 || distance > bestDistance) continue;
    best = distance < bestDistance ? [candidate] : [...best, candidate];
    bestDistance = distance;
  }
  if (best.length === 0) return '';
  return ` (did you mean ${best.length === 1 ? (best[0] ?? '') : `one of ${best.sort().join(', ')}`}?)`;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : i)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] ?? [];
      row[j] = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(at(i, j), at(i - 2, j - 2) + 1);
    }
  }
  return at(a.length, b.length);
}

/** The event type a command takes as its first word, one of those the bridge handles. */
export function eventTypeArgument(parsed: Parsed): HandledEventType {
  const [type] = parsed.positionals;
  if (type === undefined)
    throw new UsageError(`${parsed.command} needs an event type: ${HANDLED_EVENT_TYPES.join(' or ')}`, parsed.command);
  if (!isHandledEventType(type))
    throw new UsageError(
      `unknown event type "${type}": use one of ${HANDLED_EVENT_TYPES.join(', ')}${didYouMean(type, HANDLED_EVENT_TYPES)}`,
      parsed.command,
    );
  return type;
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

export function duration(parsed: Parsed, name: string): number | undefined {
  const raw = str(parsed, name);
  if (raw === undefined) return undefined;
  // shared/duration.ts, the parser of Slack's mute too.
  const ms = parseDuration(raw)?.ms;
  if (ms === undefined) throw new UsageError(`--${name} must be a duration like 90s, ${DURATION_EXAMPLES}, got "${raw}"`, parsed.command);
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

/** The deployed stack a command was told to use, and who named it; undefined when nobody did. */
interface StackChoice {
  name: string;
  source: 'flag' | 'env';
}

function stackChoice(parsed: Parsed, env: Readonly<Record<string, string | undefined>>): StackChoice | undefined {
  const flag = str(parsed, 'stack');
  if (flag !== undefined) return { name: flag, source: 'flag' };
  const fromEnv = env[CLI_ENV.stack]?.trim();
  if (fromEnv !== undefined && fromEnv !== '') return { name: fromEnv, source: 'env' };
  return undefined;
}

/** The name of a stack nobody named: never shown, the guard refuses before the look-up. */
const NO_STACK = '(none)';

/** The words that tell an operator how to pick a target, in every refusal. */
export const NAME_A_STACK =
  'start `npm start` in this directory (the local stack), or name a deployed stack with --stack NAME (or BRIDGE_STACK) and set AWS_REGION';

/**
 * Runs before the first stack look-up: with no stack named and no local stack the CLI never picks a
 * deployed stack by itself (usage, exit 2, saying why there is no local stack); otherwise it says on
 * stderr which stack it uses, since that is not always obvious.
 */
function stackGuard(choice: StackChoice | undefined, noLocal: string, command: string, io: CliIo): () => void {
  return () => {
    if (choice === undefined) throw new UsageError(`${noLocal} and no deployed stack named: ${NAME_A_STACK}`, command);
    io.stderr.write(`using stack ${choice.name} (${choice.source === 'flag' ? '--stack' : 'BRIDGE_STACK'})\n`);
  };
}

/** The local stack a command uses, or why there is none (for the refusal when it then needs a stack). */
type LocalChoice = { ready: LocalReady; explicit: boolean } | { ready: undefined; explicit: false; absence: string };

/**
 * The ready file a command uses: --local's, else the default one when no stack was named on the command
 * line and `npm start` runs. A running local stack wins over BRIDGE_STACK (a shell default), never over --stack.
 */
async function localReady(parsed: Parsed, io: CliIo): Promise<LocalChoice> {
  const localPath = str(parsed, 'local');
  if (localPath !== undefined) return { ready: await readReadyFile(localPath), explicit: true };
  if (str(parsed, 'stack') !== undefined) return { ready: undefined, explicit: false, absence: 'no local stack asked for' };
  if (io.defaultReadyFile === undefined) return { ready: undefined, explicit: false, absence: 'no local stack running' };
  const found = await findDefaultReadyFile(io.defaultReadyFile);
  if (found.ready === undefined) return { ready: undefined, explicit: false, absence: `no local stack running (${found.why})` };
  io.stderr.write(`using the local stack of \`npm start\` (${shortPath(found.ready.path)}); pass --stack NAME for a deployed one\n`);
  return { ready: found.ready, explicit: false };
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
  const found = await localReady(parsed, io);
  const local = found.ready;
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
      choice?.name ?? NO_STACK,
      settings,
      io.describeStack ?? describeStackWithSdk,
      stackGuard(
        choice,
        'absence' in found ? found.absence : `the ready file ${shortPath(found.ready.path)} lacks what it needs`,
        parsed.command,
        io,
      ),
    ),
    hint: hintFor(parsed, found.explicit, local === undefined && choice?.source === 'env' ? choice.name : undefined),
  };
}

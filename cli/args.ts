/**
 * Argument parsing on node:util parseArgs (strict: unknown options are usage errors), plus the
 * value parsers the commands share (durations, counts) and the per-run command context.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_STACK, describeStackWithSdk, StackOutputs, type AwsService, type AwsSettings } from './aws';
import { UsageError } from './errors';
import { defaultSleep, Output, type CliIo } from './io';
import { readReadyFile, type LocalReady } from './ready-file';

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
 * parseArgs refuses `--age -30` (a value that starts with a dash); join such pairs into
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

export function parse(command: string, argv: readonly string[], options: OptionSpec): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args: joinNegativeValues(argv, options),
      options: { ...OUTPUT_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
    return { command, values, positionals };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      // Node's message goes on about positionals after '--'; the first sentence is the useful part.
      const first = ((err as Error).message.split('\n')[0] ?? 'bad arguments').replace(/\. To specify a positional argument.*$/, '.');
      throw new UsageError(first, command);
    }
    throw err;
  }
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
  return list.filter((item): item is string => typeof item === 'string').map((item) => item.trim()).filter((item) => item !== '');
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
}

export async function buildContext(parsed: Parsed, io: CliIo, extraEndpoints: Partial<Record<AwsService, string>> = {}): Promise<CommandContext> {
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
  const localPath = str(parsed, 'local');
  const local = localPath === undefined ? undefined : await readReadyFile(localPath);
  if (local !== undefined) {
    if (endpoints.sqs === undefined && local.sqsEndpoint !== undefined) endpoints.sqs = local.sqsEndpoint;
    if (endpoints.dynamodb === undefined && local.dynamoEndpoint !== undefined) endpoints.dynamodb = local.dynamoEndpoint;
  }
  const settings: AwsSettings = { region: str(parsed, 'region') ?? local?.region, endpoints, env };
  return {
    io,
    out: new Output(io, bool(parsed, 'json')),
    env,
    now: io.now ?? Date.now,
    sleep: io.sleep ?? defaultSleep,
    fetch: io.fetch ?? globalThis.fetch,
    settings,
    local,
    stack: new StackOutputs(str(parsed, 'stack') ?? DEFAULT_STACK, settings, io.describeStack ?? describeStackWithSdk),
  };
}

/**
 * Deployment configuration read from CDK context (cdk.json, overridable with `-c key=value`).
 *
 * Values from cdk.json arrive as JSON types; values from `-c` arrive as strings. Every reader
 * accepts both, parses strictly and throws a ContextError that names the offending key, so a bad
 * override fails at synth with a message that says what to fix.
 */

/** The value a stack-created secret holds until an operator puts the real one: one value, shared with the functions. */
export { SECRET_PLACEHOLDER } from '../shared/secrets';

/** Retention periods CloudWatch Logs accepts, in days. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

export type TableRemovalPolicy = 'retain' | 'destroy';
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

export interface BridgeConfig {
  readonly stage: string;
  readonly readApiBaseUrl: string;
  readonly slackDefaultChannel: string;
  /** Project id → Slack channel. */
  readonly projectChannels: Readonly<Record<string, string>>;
  readonly visibilityRange: string;
  readonly gapsPageSize: number;
  readonly digestBatchSize: number;
  readonly digestBatchWindowSeconds: number;
  readonly digestMaxConcurrency: number;
  readonly maxReceiveCount: number;
  /** Subscribe this address to a stack-created alarm topic (undefined: no subscription). */
  readonly alarmEmail: string | undefined;
  /** Send alarms to this existing topic instead of creating one. */
  readonly alarmTopicArn: string | undefined;
  readonly silenceAlarmHours: number;
  /** SignatureRejected count in 5 minutes that raises the alarm. */
  readonly signatureRejectedAlarmThreshold: number;
  readonly dedupRetentionDays: number;
  readonly tableRemovalPolicy: TableRemovalPolicy;
  readonly tableDeletionProtection: boolean;
  /** Complete ARNs of existing secrets; undefined means the stack creates the secret. */
  readonly readApiKeySecretArn: string | undefined;
  readonly slackTokenSecretArn: string | undefined;
  readonly signingSecretsSecretArn: string | undefined;
  readonly logRetentionDays: (typeof LOG_RETENTION_DAYS)[number];
  readonly logLevel: LogLevel;
  readonly apiThrottleRateLimit: number;
  readonly apiThrottleBurstLimit: number;
}

export class ContextError extends Error {
  override readonly name = 'ContextError';
  constructor(
    readonly key: string,
    problem: string,
  ) {
    super(`Invalid CDK context "${key}": ${problem}. Fix it in cdk.json or pass -c ${key}=<value>.`);
  }
}

/** Reads one raw context value (e.g. `(key) => app.node.tryGetContext(key)`). */
export type ContextReader = (key: string) => unknown;

/**
 * Defaults for optional keys; they equal the values shipped in cdk.json. Keys without a default
 * (stage, readApiBaseUrl, slackDefaultChannel) must be set.
 */
export const CONTEXT_DEFAULTS = {
  projectChannels: {},
  visibilityRange: '7d',
  gapsPageSize: 50,
  digestBatchSize: 10,
  digestBatchWindowSeconds: 5,
  digestMaxConcurrency: 2,
  maxReceiveCount: 5,
  alarmEmail: '',
  alarmTopicArn: '',
  silenceAlarmHours: 26,
  signatureRejectedAlarmThreshold: 10,
  dedupRetentionDays: 3,
  tableRemovalPolicy: 'retain',
  tableDeletionProtection: true,
  readApiKeySecretArn: '',
  slackTokenSecretArn: '',
  signingSecretsSecretArn: '',
  logRetentionDays: 30,
  logLevel: 'INFO',
  apiThrottleRateLimit: 50,
  apiThrottleBurstLimit: 100,
} as const;

/** Every context key this app reads. */
export const CONTEXT_KEYS = ['stage', 'readApiBaseUrl', 'slackDefaultChannel', ...Object.keys(CONTEXT_DEFAULTS)] as const;

/** Lambda's limit is 4 KB for all variables together; keep the channel map well inside it. */
const MAX_PROJECT_CHANNELS_JSON = 2500;

function show(value: unknown): string {
  if (typeof value === 'string') return `"${value}"`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

class Reader {
  constructor(private readonly get: ContextReader) {}

  private raw(key: string): unknown {
    const value = this.get(key);
    if (value === undefined || value === null) {
      return (CONTEXT_DEFAULTS as Record<string, unknown>)[key];
    }
    return value;
  }

  string(key: string, options: { required?: boolean; pattern?: RegExp; hint?: string } = {}): string {
    const value = this.raw(key);
    if (value === undefined && options.required) throw new ContextError(key, 'is not set');
    if (typeof value !== 'string') throw new ContextError(key, `must be a string, got ${show(value)}`);
    const text = value.trim();
    if (options.required && text === '') throw new ContextError(key, 'must not be empty');
    if (options.pattern && text !== '' && !options.pattern.test(text)) {
      throw new ContextError(key, `${options.hint ?? `must match ${String(options.pattern)}`}, got ${show(value)}`);
    }
    return text;
  }

  optionalString(key: string, pattern: RegExp, hint: string): string | undefined {
    const text = this.string(key, { pattern, hint });
    return text === '' ? undefined : text;
  }

  number(key: string, options: { min: number; max: number; integer: boolean }): number {
    const value = this.raw(key);
    let parsed: number;
    if (typeof value === 'number') {
      parsed = value;
    } else if (typeof value === 'string' && (options.integer ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/).test(value.trim())) {
      parsed = Number(value.trim());
    } else {
      throw new ContextError(key, `must be ${options.integer ? 'a whole number' : 'a number'}, got ${show(value)}`);
    }
    if (!Number.isFinite(parsed) || (options.integer && !Number.isInteger(parsed))) {
      throw new ContextError(key, `must be ${options.integer ? 'a whole number' : 'a number'}, got ${show(value)}`);
    }
    if (parsed < options.min || parsed > options.max) {
      throw new ContextError(key, `must be between ${options.min} and ${options.max}, got ${parsed}`);
    }
    return parsed;
  }

  integer(key: string, min: number, max: number): number {
    return this.number(key, { min, max, integer: true });
  }

  boolean(key: string): boolean {
    const value = this.raw(key);
    if (typeof value === 'boolean') return value;
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new ContextError(key, `must be true or false, got ${show(value)}`);
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T {
    const value = this.raw(key);
    const text = typeof value === 'string' ? value.trim() : value;
    const match = allowed.find((candidate) => candidate === text);
    if (match === undefined) {
      throw new ContextError(key, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${show(value)}`);
    }
    return match;
  }

  stringMap(key: string): Record<string, string> {
    let value = this.raw(key);
    if (typeof value === 'string') {
      try {
        value = JSON.parse(value) as unknown;
      } catch {
        throw new ContextError(key, `must be a JSON object such as {"<project id>": "#channel"}, got ${show(value)}`);
      }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ContextError(key, `must be a JSON object such as {"<project id>": "#channel"}, got ${show(value)}`);
    }
    const out: Record<string, string> = {};
    for (const [entryKey, entryValue] of Object.entries(value as Record<string, unknown>)) {
      if (entryKey.trim() === '') throw new ContextError(key, 'has an empty project id');
      if (typeof entryValue !== 'string' || entryValue.trim() === '') {
        throw new ContextError(key, `must map each project id to a non-empty channel; "${entryKey}" maps to ${show(entryValue)}`);
      }
      out[entryKey.trim()] = entryValue.trim();
    }
    return out;
  }
}

const ARN_PARTITION = 'arn:aws(?:-[a-z]+)*';
const REGION = '[a-z]{2}(?:-[a-z]+)+-\\d';
/** A complete secret ARN, i.e. with the 6-character suffix Secrets Manager appends to the name. */
const SECRET_ARN = new RegExp(`^${ARN_PARTITION}:secretsmanager:${REGION}:\\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$`);
const TOPIC_ARN = new RegExp(`^${ARN_PARTITION}:sns:${REGION}:\\d{12}:[A-Za-z0-9_-]{1,256}$`);
const SECRET_ARN_HINT =
  'must be empty (the stack creates the secret) or the complete ARN of an existing secret, ' +
  'including the 6-character suffix (arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf)';

export function readBridgeConfig(get: ContextReader): BridgeConfig {
  const r = new Reader(get);

  const stage = r.string('stage', {
    required: true,
    pattern: /^[A-Za-z][A-Za-z0-9-]{0,29}$/,
    hint: 'must start with a letter and hold only letters, digits and hyphens (at most 30 characters)',
  });

  const readApiBaseUrl = r.string('readApiBaseUrl', { required: true });
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(readApiBaseUrl);
  } catch {
    throw new ContextError('readApiBaseUrl', `must be an absolute https URL, got ${show(readApiBaseUrl)}`);
  }
  if (parsedUrl.protocol !== 'https:') {
    throw new ContextError('readApiBaseUrl', `must use https, got ${show(readApiBaseUrl)}`);
  }

  const slackDefaultChannel = r.string('slackDefaultChannel', { required: true });

  const projectChannels = r.stringMap('projectChannels');
  if (JSON.stringify(projectChannels).length > MAX_PROJECT_CHANNELS_JSON) {
    throw new ContextError(
      'projectChannels',
      `is too large for a Lambda environment variable (more than ${MAX_PROJECT_CHANNELS_JSON} characters of JSON)`,
    );
  }

  const digestBatchSize = r.integer('digestBatchSize', 1, 10_000);
  const digestBatchWindowSeconds = r.integer('digestBatchWindowSeconds', 0, 300);
  if (digestBatchSize > 10 && digestBatchWindowSeconds < 1) {
    throw new ContextError('digestBatchWindowSeconds', 'must be at least 1 when digestBatchSize is above 10 (an SQS rule)');
  }

  const alarmEmail = r.optionalString('alarmEmail', /^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be empty or an e-mail address');
  const alarmTopicArn = r.optionalString('alarmTopicArn', TOPIC_ARN, 'must be empty or an SNS topic ARN');
  if (alarmEmail !== undefined && alarmTopicArn !== undefined) {
    throw new ContextError(
      'alarmEmail',
      'cannot be combined with alarmTopicArn; subscribe the address to that topic yourself, or leave alarmTopicArn empty so the stack creates a topic',
    );
  }

  const logRetention = r.integer('logRetentionDays', 1, 3653);
  const logRetentionDays = LOG_RETENTION_DAYS.find((days) => days === logRetention);
  if (logRetentionDays === undefined) {
    throw new ContextError('logRetentionDays', `must be one of ${LOG_RETENTION_DAYS.join(', ')} (CloudWatch Logs values), got ${logRetention}`);
  }

  return {
    stage,
    readApiBaseUrl: readApiBaseUrl.replace(/\/+$/, ''),
    slackDefaultChannel,
    projectChannels,
    visibilityRange: r.string('visibilityRange', {
      required: true,
      pattern: /^[A-Za-z0-9_-]{1,16}$/,
      hint: 'must be a short range token such as 7d',
    }),
    gapsPageSize: r.integer('gapsPageSize', 1, 1000),
    digestBatchSize,
    digestBatchWindowSeconds,
    // At least 2 is the SQS event source minimum; small values protect the read API's rate limit.
    digestMaxConcurrency: r.integer('digestMaxConcurrency', 2, 1000),
    maxReceiveCount: r.integer('maxReceiveCount', 1, 1000),
    alarmEmail,
    alarmTopicArn,
    // Period 1 h × this many evaluation periods; CloudWatch allows up to 7 days for hourly periods.
    silenceAlarmHours: r.integer('silenceAlarmHours', 1, 168),
    signatureRejectedAlarmThreshold: r.integer('signatureRejectedAlarmThreshold', 1, 1_000_000),
    dedupRetentionDays: r.integer('dedupRetentionDays', 1, 365),
    tableRemovalPolicy: r.oneOf<TableRemovalPolicy>('tableRemovalPolicy', ['retain', 'destroy']),
    tableDeletionProtection: r.boolean('tableDeletionProtection'),
    readApiKeySecretArn: r.optionalString('readApiKeySecretArn', SECRET_ARN, SECRET_ARN_HINT),
    slackTokenSecretArn: r.optionalString('slackTokenSecretArn', SECRET_ARN, SECRET_ARN_HINT),
    signingSecretsSecretArn: r.optionalString('signingSecretsSecretArn', SECRET_ARN, SECRET_ARN_HINT),
    logRetentionDays,
    logLevel: r.oneOf<LogLevel>('logLevel', ['DEBUG', 'INFO', 'WARN', 'ERROR']),
    apiThrottleRateLimit: r.number('apiThrottleRateLimit', { min: 1, max: 10_000, integer: false }),
    apiThrottleBurstLimit: r.integer('apiThrottleBurstLimit', 1, 5_000),
  };
}

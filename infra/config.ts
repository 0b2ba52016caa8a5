/**
 * Deployment configuration: one committed file per stage, `config/<stage>.json`, picked with
 * `cdk synth|deploy -c stage=<stage>`. Nothing else comes from context, so a plain redeploy uses
 * exactly the committed values (no `-c` flag to forget). Every problem fails the synth with a
 * ConfigError naming the key and the file.
 */
import { DIGEST_MODES, POST_RECOVERY_MODES, type DigestMode, type PostRecovery } from '../shared/contracts';
import { dashboardUrlTemplateProblem } from '../shared/digest/links';
import { parseNoiseMinimums, type NoiseMinimums } from '../shared/digest/noise';
import { canonicalZone, isTimeZone } from '../shared/weekly/schedule';
import { parseSlackAccessPolicy, type SlackAccessPolicy } from '../shared/slack-app/policy';
import { SLACK_ID_PATTERNS } from '../shared/slack-app/workspace-gate';
import { CHANNEL_ID_HINT, isHomeChannelId } from '../shared/routing';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../shared/config-env';
import { ConfigFields, type Collected } from './config-fields';
import { maxDigestBatchSize, perRecordSeconds } from './digest-budget';

/** Where the stage files live (repository root `config/`). */
export const CONFIG_DIR = fileURLToPath(new URL('../config/', import.meta.url));

/** Retention periods CloudWatch Logs accepts, in days. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

export type TableRemovalPolicy = 'retain' | 'destroy';

/** An API Gateway custom domain for the API (`customDomainName` + `customDomainCertificateArn`). */
export interface CustomDomain {
  /** e.g. `slack-bridge.example.com`; the webhook and Slack request URLs use it. */
  readonly name: string;
  /** An ACM certificate for it, in the stage's region (a regional endpoint). */
  readonly certificateArn: string;
}
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

export interface BridgeConfig {
  readonly stage: string;
  /** The file the values came from (named in errors and the stack description). */
  readonly source: string;
  /** A development stage: no alarm destination required, no termination protection. */
  readonly development: boolean;
  readonly readApiBaseUrl: string;
  readonly slackDefaultChannel: string;
  /** Project id → Slack channel. */
  readonly projectChannels: Readonly<Record<string, string>>;
  readonly visibilityRange: string;
  readonly gapsPageSize: number;
  /** https template with {project_id}, {run_id}, {prompt_id}, {asset_id}: links in digests (none when unset). */
  readonly dashboardUrlTemplate: string | undefined;
  /** 'changes': a quiet run posts one compact line and no thread. */
  readonly digestMode: DigestMode;
  /** Trend charts (PNG) in the digest threads; off: the digest never loads the chart code. */
  readonly chartsEnabled: boolean;
  /** The mode a new subscription starts in ('changes' by default: a quiet run is one line there). */
  readonly subscriptionDefaultMode: DigestMode;
  /** Per-label minimum changes of metrics that are not shares (shared/digest/noise.ts); empty = the defaults. */
  readonly noiseMinimums: NoiseMinimums;
  /** The stage's IANA time zone (default UTC): the weekly report's default Monday 09:00 is there. */
  readonly timeZone: string;
  readonly digestBatchSize: number;
  readonly digestBatchWindowSeconds: number;
  readonly digestMaxConcurrency: number;
  readonly maxReceiveCount: number;
  /** Subscribe this address to a stack-created alarm topic (undefined: no subscription). */
  readonly alarmEmail: string | undefined;
  /** Send alarms to this existing topic instead of creating one. */
  readonly alarmTopicArn: string | undefined;
  readonly silenceAlarmHours: number;
  readonly signatureRejectedAlarmThreshold: number;
  /** Hours a run.completed may wait for its digest (posted, superseded or duplicate) before the alarm. */
  readonly undeliveredDigestHours: number;
  /** Age of the oldest queued message that raises the alarm. */
  readonly queueAgeAlarmMinutes: number;
  /** Share of webhook requests answered 5xx in 5 minutes that raises the alarm... */
  readonly api5xxRatePercent: number;
  /** ...once at least this many 5xx were answered (one retried 503 is not an outage). */
  readonly api5xxMinCount: number;
  readonly dedupRetentionDays: number;
  readonly tableRemovalPolicy: TableRemovalPolicy;
  readonly tableDeletionProtection: boolean;
  /** Complete ARNs of existing secrets; undefined means the stack creates the secret. */
  readonly readApiKeySecretArn: string | undefined;
  readonly slackTokenSecretArn: string | undefined;
  readonly signingSecretsSecretArn: string | undefined;
  /** The Slack app's signing secret (verifies /slack/commands and /slack/interactions). */
  readonly slackSigningSecretArn: string | undefined;
  readonly logRetentionDays: (typeof LOG_RETENTION_DAYS)[number];
  readonly logLevel: LogLevel;
  readonly apiThrottleRateLimit: number;
  readonly apiThrottleBurstLimit: number;
  /** Puts CloudFront + a WAF rate-based rule (per client address) in front of the webhook. */
  readonly clientRateLimitEnabled: boolean;
  /** Requests one client address may send in any 5 minutes before WAF refuses it (403). */
  readonly clientRateLimitPerFiveMinutes: number;
  /** Workspaces (T…) whose requests the Slack app serves; empty: it serves nobody (403 not_configured). */
  readonly slackTeamIds: readonly string[];
  /** Enterprise Grid org (E…) the Slack requests must come from, when set. */
  readonly slackEnterpriseId: string | undefined;
  /** The Slack app's id (A…): requests for another app are refused. */
  readonly slackAppId: string | undefined;
  /** The app's OAuth client id: set, the stack serves "Add to Slack" (GET /slack/install, /slack/oauth_redirect). */
  readonly slackClientId: string | undefined;
  /** An existing secret holding the app's client secret; undefined: the stack creates it (with slackClientId). */
  readonly slackClientSecretArn: string | undefined;
  /** How a retry learns an earlier attempt's posts: 'history' (reads the channel) or 'ledger' (shared/digest/posted-ledger.ts). */
  readonly slackPostRecovery: PostRecovery;
  /** Who may change subscriptions, and where (shared/slack-app/policy.ts). */
  readonly slackAccess: SlackAccessPolicy;
  /** Route throttle of POST /slack/commands and POST /slack/interactions (each), apart from the webhook's. */
  readonly slackThrottleRateLimit: number;
  readonly slackThrottleBurstLimit: number;
  /** The API's custom domain; with it the default execute-api endpoint is disabled. */
  readonly customDomain: CustomDomain | undefined;
}

/** Defaults of the optional keys (documented in docs/DEPLOY.md). */
export const CONFIG_DEFAULTS = {
  development: false,
  projectChannels: {},
  visibilityRange: '7d',
  gapsPageSize: 50,
  digestMode: 'full',
  chartsEnabled: false,
  subscriptionDefaultMode: 'changes',
  timeZone: 'UTC',
  digestBatchSize: 10,
  digestBatchWindowSeconds: 5,
  digestMaxConcurrency: 2,
  maxReceiveCount: 5,
  silenceAlarmHours: 26,
  signatureRejectedAlarmThreshold: 10,
  undeliveredDigestHours: 6,
  queueAgeAlarmMinutes: 30,
  api5xxRatePercent: 5,
  api5xxMinCount: 3,
  dedupRetentionDays: 3,
  tableRemovalPolicy: 'retain',
  tableDeletionProtection: true,
  logRetentionDays: 30,
  logLevel: 'INFO',
  // Expected peak is a few deliveries per second (one per finished run, plus retries); the limit
  // sits two orders of magnitude above it so junk traffic cannot push the service's deliveries into 429.
  apiThrottleRateLimit: 500,
  apiThrottleBurstLimit: 1000,
  clientRateLimitEnabled: false,
  clientRateLimitPerFiveMinutes: 300,
  // Slack sends one request per command or click; a workspace's busiest minute is a few per second.
  // Far below the webhook's, so a flood of unsigned Slack requests is refused on its own routes.
  slackThrottleRateLimit: 50,
  slackThrottleBurstLimit: 100,
  // A single-workspace app has the history scopes and no Events API subscription: it keeps reading the channel.
  slackPostRecovery: 'history',
} as const;

const OPTIONAL_WITHOUT_DEFAULT = [
  'dashboardUrlTemplate',
  'alarmEmail',
  'alarmTopicArn',
  'readApiKeySecretArn',
  'slackTokenSecretArn',
  'signingSecretsSecretArn',
  'slackSigningSecretArn',
  'slackTeamIds',
  'slackEnterpriseId',
  'slackAppId',
  'slackClientId',
  'slackClientSecretArn',
  'slackAccess',
  'noiseMinimums',
  'customDomainName',
  'customDomainCertificateArn',
];

/** Every key a stage file may hold. */
export const CONFIG_KEYS = ['readApiBaseUrl', 'slackDefaultChannel', ...OPTIONAL_WITHOUT_DEFAULT, ...Object.keys(CONFIG_DEFAULTS)] as const;

const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,29}$/;
/** Lambda's limit is 4 KB for all variables together; keep the channel map well inside it. */
const MAX_PROJECT_CHANNELS_JSON = 2500;
const ARN_PARTITION = 'arn:aws(?:-[a-z]+)*';
const REGION = '[a-z]{2}(?:-[a-z]+)+-\\d';
/** A complete secret ARN, i.e. with the 6-character suffix Secrets Manager appends to the name. */
const SECRET_ARN = new RegExp(`^${ARN_PARTITION}:secretsmanager:${REGION}:\\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$`);
const TOPIC_ARN = new RegExp(`^${ARN_PARTITION}:sns:${REGION}:\\d{12}:[A-Za-z0-9_-]{1,256}$`);
const CERTIFICATE_ARN = new RegExp(`^${ARN_PARTITION}:acm:${REGION}:\\d{12}:certificate/[0-9a-f-]{36}$`);
const DOMAIN_NAME = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const SECRET_ARN_HINT =
  'must be empty (the stack creates the secret) or the complete ARN of an existing secret, ' +
  'including the 6-character suffix (arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf)';

/** Stages that have a file in `dir` (the example is a template, not a stage). */
export function knownStages(dir: string = CONFIG_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json') && name !== 'example.json')
    .map((name) => name.slice(0, -'.json'.length))
    .sort();
}

/** Reads and validates `config/<stage>.json`; `stage` is the raw `-c stage=` context value. */
export function loadStageConfig(stage: unknown, dir: string = CONFIG_DIR): BridgeConfig {
  const stages = knownStages(dir).join(', ') || 'none yet';
  if (typeof stage !== 'string' || stage.trim() === '') {
    throw ConfigError.inFile(
      'stage',
      'the command line',
      `is required: pass -c stage=<name> to deploy config/<name>.json (stages: ${stages})`,
    );
  }
  if (!STAGE_PATTERN.test(stage)) {
    throw ConfigError.inFile(
      'stage',
      'the command line',
      `must be lower-case letters, digits and hyphens, starting with a letter (at most 30), got "${stage}"`,
    );
  }
  const path = join(dir, `${stage}.json`);
  const file = relative(process.cwd(), path) || path;
  if (!existsSync(path))
    throw ConfigError.inFile(
      'stage',
      'the command line',
      `is "${stage}", a stage without a file: create ${file} (copy config/example.json), or pass a stage that has one (${stages})`,
    );
  return parseStageConfig(stage, readJsonObject(path, file), file);
}

function readJsonObject(path: string, file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (error) {
    throw ConfigError.inFile('(file)', file, `is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw ConfigError.inFile('(file)', file, 'must hold one JSON object');
  return parsed as Record<string, unknown>;
}

/**
 * Validates one stage's values (as read from `file`): every key is read, and every key that can't be
 * used is named in one error (StageFileErrors when there are several).
 */
export function parseStageConfig(stage: string, values: Readonly<Record<string, unknown>>, file: string): BridgeConfig {
  const f = new ConfigFields(values, file, CONFIG_DEFAULTS);
  const read = <T>(reader: () => T): T | undefined => f.collect(reader);
  f.rejectUnknown(CONFIG_KEYS);
  const development = read(() => f.boolean('development'));
  return f.done<BridgeConfig>({
    stage,
    source: file,
    development,
    readApiBaseUrl: read(() => readApiBaseUrl(f)),
    slackDefaultChannel: read(() => channelId(f, 'slackDefaultChannel', f.requiredString('slackDefaultChannel'))),
    projectChannels: read(() => projectChannels(f)),
    visibilityRange: read(() => f.matching('visibilityRange', /^[A-Za-z0-9_-]{1,16}$/, 'must be a short range token such as 7d')),
    gapsPageSize: read(() => f.integer('gapsPageSize', 1, 1000)),
    dashboardUrlTemplate: read(() => dashboardUrlTemplate(f)),
    digestMode: read(() => f.oneOf('digestMode', DIGEST_MODES)),
    chartsEnabled: read(() => f.boolean('chartsEnabled')),
    subscriptionDefaultMode: read(() => f.oneOf('subscriptionDefaultMode', DIGEST_MODES)),
    noiseMinimums: read(() => noiseMinimums(f)),
    timeZone: read(() => stageTimeZone(f)),
    ...digestSettings(f),
    // An unreadable "development" is not a development stage: the alarm destination is still asked for.
    ...alarmDestination(f, development ?? false),
    ...alarmSettings(f),
    dedupRetentionDays: read(() => f.integer('dedupRetentionDays', 1, 365)),
    tableRemovalPolicy: read(() => f.oneOf<TableRemovalPolicy>('tableRemovalPolicy', ['retain', 'destroy'])),
    tableDeletionProtection: read(() => f.boolean('tableDeletionProtection')),
    readApiKeySecretArn: read(() => f.optionalString('readApiKeySecretArn', SECRET_ARN, SECRET_ARN_HINT)),
    slackTokenSecretArn: read(() => f.optionalString('slackTokenSecretArn', SECRET_ARN, SECRET_ARN_HINT)),
    signingSecretsSecretArn: read(() => f.optionalString('signingSecretsSecretArn', SECRET_ARN, SECRET_ARN_HINT)),
    slackSigningSecretArn: read(() => f.optionalString('slackSigningSecretArn', SECRET_ARN, SECRET_ARN_HINT)),
    logRetentionDays: read(() => logRetentionDays(f)),
    logLevel: read(() => f.oneOf<LogLevel>('logLevel', ['DEBUG', 'INFO', 'WARN', 'ERROR'])),
    apiThrottleRateLimit: read(() => f.number('apiThrottleRateLimit', 1, 10_000)),
    apiThrottleBurstLimit: read(() => f.integer('apiThrottleBurstLimit', 1, 5_000)),
    clientRateLimitEnabled: read(() => f.boolean('clientRateLimitEnabled')),
    // WAF's rate-based rule accepts 10 to 2 billion requests per evaluation window.
    clientRateLimitPerFiveMinutes: read(() => f.integer('clientRateLimitPerFiveMinutes', 10, 2_000_000_000)),
    ...slackApp(f),
    customDomain: read(() => customDomain(f)),
  });
}

type SlackAppKey =
  | 'slackTeamIds'
  | 'slackEnterpriseId'
  | 'slackAppId'
  | 'slackClientId'
  | 'slackClientSecretArn'
  | 'slackPostRecovery'
  | 'slackAccess'
  | 'slackThrottleRateLimit'
  | 'slackThrottleBurstLimit';

function slackApp(f: ConfigFields): Collected<Pick<BridgeConfig, SlackAppKey>> {
  const slackTeamIds = f.collect(() => f.stringList('slackTeamIds', SLACK_ID_PATTERNS.team, 'a workspace id such as ["T0123ABCD"]'));
  const slackEnterpriseId = f.collect(() =>
    f.optionalString('slackEnterpriseId', SLACK_ID_PATTERNS.enterprise, 'must be empty or an Enterprise Grid org id (E…)'),
  );
  const slackAppId = f.collect(() =>
    f.optionalString('slackAppId', SLACK_ID_PATTERNS.app, 'must be empty or the Slack app id (A…, Basic Information → App ID)'),
  );
  // Unset is allowed (the app is created after the first deploy): the Slack app then serves nobody.
  // Half set is a mistake: the workspace without the app (or the reverse) would serve nobody either.
  f.collect(() => {
    if (f.failed('slackTeamIds') || f.failed('slackEnterpriseId') || f.failed('slackAppId')) return;
    const workspace = (slackTeamIds?.length ?? 0) > 0 || slackEnterpriseId !== undefined;
    if (workspace && slackAppId === undefined)
      throw f.fail('slackAppId', 'must be set with "slackTeamIds" (Basic Information → App Credentials → App ID)');
    if (!workspace && slackAppId !== undefined)
      throw f.fail('slackTeamIds', 'must name the workspace (T…) when "slackAppId" is set (`npx bridge doctor` prints it)');
  });
  const slackAccess = f.collect(() => parseSlackAccessPolicy(f.value('slackAccess'), 'slackAccess', f.file));
  f.collect(() => {
    if (
      slackAccess !== undefined &&
      JSON.stringify(slackAccessJson(slackAccess)).length + JSON.stringify(f.stringMap('projectChannels')).length >
        MAX_PROJECT_CHANNELS_JSON
    ) {
      throw f.fail(
        'slackAccess',
        `and "projectChannels" together are too large for the functions' environment (more than ${MAX_PROJECT_CHANNELS_JSON} characters of JSON)`,
      );
    }
  });
  return {
    slackTeamIds,
    slackEnterpriseId,
    slackAppId,
    slackClientId: f.optionalString(
      'slackClientId',
      /^\d+\.\d+$/,
      "must be empty or the app's client id (digits.digits, Basic Information → App Credentials)",
    ),
    slackClientSecretArn: f.optionalString('slackClientSecretArn', SECRET_ARN, SECRET_ARN_HINT),
    slackPostRecovery: f.oneOf<PostRecovery>('slackPostRecovery', [...POST_RECOVERY_MODES]),
    slackAccess,
    slackThrottleRateLimit: f.collect(() => f.number('slackThrottleRateLimit', 1, 10_000)),
    slackThrottleBurstLimit: f.collect(() => f.integer('slackThrottleBurstLimit', 1, 5_000)),
  };
}

/**
 * The policy as the stage file spells it (what SLACK_ACCESS_POLICY carries): parseSlackAccessPolicy
 * reads it back to the same policy.
 */
export function slackAccessJson(policy: SlackAccessPolicy): Record<string, unknown> {
  const { changes } = policy;
  const rule =
    changes.kind === 'everyone' ? 'everyone' : changes.kind === 'users' ? { users: [...changes.userIds] } : { userGroup: changes.groupId };
  return Object.keys(policy.changeChannels).length === 0 ? { changes: rule } : { changes: rule, changeChannels: policy.changeChannels };
}

function customDomain(f: ConfigFields): CustomDomain | undefined {
  const name = f.optionalString(
    'customDomainName',
    DOMAIN_NAME,
    'must be empty or a lower-case host name such as slack-bridge.example.com',
  );
  const certificateArn = f.optionalString(
    'customDomainCertificateArn',
    CERTIFICATE_ARN,
    'must be empty or an ACM certificate ARN (arn:aws:acm:<stage region>:<account>:certificate/<id>)',
  );
  if (name === undefined && certificateArn === undefined) return undefined;
  if (name === undefined) throw f.fail('customDomainName', 'must be set with "customDomainCertificateArn"');
  if (certificateArn === undefined)
    throw f.fail('customDomainCertificateArn', `must be set with "customDomainName": an ACM certificate for ${name} in the stage's region`);
  return { name, certificateArn };
}

/** Lambda's 4 KB of variables are shared: the minimums go in NOISE_MINIMUMS as JSON. */
const MAX_NOISE_MINIMUMS_JSON = 1000;

function stageTimeZone(f: ConfigFields): string {
  const zone = f.value('timeZone') ?? CONFIG_DEFAULTS.timeZone;
  if (typeof zone !== 'string' || !isTimeZone(zone)) throw f.fail('timeZone', 'must be an IANA time zone such as "Europe/Berlin" or "UTC"');
  return canonicalZone(zone);
}

function noiseMinimums(f: ConfigFields): NoiseMinimums {
  let minimums: NoiseMinimums;
  try {
    minimums = parseNoiseMinimums(f.value('noiseMinimums'), 'noiseMinimums', f.file);
  } catch (error) {
    // The digest's own validation, reported like every other key of the stage file.
    const problem = error instanceof Error ? error.message.replace(/^Configuration error: noiseMinimums /, '') : String(error);
    throw f.fail('noiseMinimums', problem.replace(/ \(fix it in [^)]*\)$/, ''));
  }
  if (JSON.stringify(minimums).length > MAX_NOISE_MINIMUMS_JSON)
    throw f.fail(
      'noiseMinimums',
      `is too large for the digest function's environment (more than ${MAX_NOISE_MINIMUMS_JSON} characters of JSON)`,
    );
  return minimums;
}

function dashboardUrlTemplate(f: ConfigFields): string | undefined {
  const template = f.optionalString('dashboardUrlTemplate', /^\S+$/, 'must be an https URL template without spaces');
  const problem = template === undefined ? null : dashboardUrlTemplateProblem(template);
  if (problem !== null) throw f.fail('dashboardUrlTemplate', problem);
  return template;
}

function readApiBaseUrl(f: ConfigFields): string {
  const text = f.requiredString('readApiBaseUrl');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw f.fail('readApiBaseUrl', `must be an absolute https URL, got "${text}"`);
  }
  if (url.protocol !== 'https:') throw f.fail('readApiBaseUrl', `must use https, got "${text}"`);
  return text.replace(/\/+$/, '');
}

/**
 * A home channel, by its id: Slack reports clicks and commands by id, so a name here would be a second
 * key for the same channel (two posts per run once someone changes a setting there). Ids also need no
 * `channels:read` scope and no lookup at cold start.
 */
function channelId(f: ConfigFields, key: string, channel: string): string {
  if (!isHomeChannelId(channel)) throw f.fail(key, `${CHANNEL_ID_HINT}; got ${JSON.stringify(channel)}`);
  return channel;
}

function projectChannels(f: ConfigFields): Record<string, string> {
  const channels = f.stringMap('projectChannels');
  for (const [project, channel] of Object.entries(channels)) channelId(f, `projectChannels.${project}`, channel);
  if (JSON.stringify(channels).length > MAX_PROJECT_CHANNELS_JSON) {
    throw f.fail(
      'projectChannels',
      `is too large for a Lambda environment variable (more than ${MAX_PROJECT_CHANNELS_JSON} characters of JSON)`,
    );
  }
  return channels;
}

function digestSettings(
  f: ConfigFields,
): Collected<Pick<BridgeConfig, 'digestBatchSize' | 'digestBatchWindowSeconds' | 'digestMaxConcurrency' | 'maxReceiveCount'>> {
  const digestBatchSize = f.collect(() => {
    const size = f.integer('digestBatchSize', 1, 10_000);
    if (size > maxDigestBatchSize())
      throw f.fail(
        'digestBatchSize',
        `is ${size}, but at ${perRecordSeconds()} s per record at most ${maxDigestBatchSize()} fit Lambda's 900 s`,
      );
    return size;
  });
  const digestBatchWindowSeconds = f.collect(() => {
    const seconds = f.integer('digestBatchWindowSeconds', 0, 300);
    if ((digestBatchSize ?? 0) > 10 && seconds < 1)
      throw f.fail('digestBatchWindowSeconds', 'must be at least 1 when digestBatchSize is above 10 (an SQS rule)');
    return seconds;
  });
  return {
    digestBatchSize,
    digestBatchWindowSeconds,
    // At least 2 is the SQS event source minimum; small values protect the read API's rate limit.
    digestMaxConcurrency: f.collect(() => f.integer('digestMaxConcurrency', 2, 1000)),
    maxReceiveCount: f.collect(() => f.integer('maxReceiveCount', 1, 1000)),
  };
}

function alarmDestination(f: ConfigFields, development: boolean): Collected<Pick<BridgeConfig, 'alarmEmail' | 'alarmTopicArn'>> {
  const alarmEmail = f.collect(() => f.optionalString('alarmEmail', /^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be empty or an e-mail address'));
  const alarmTopicArn = f.collect(() => f.optionalString('alarmTopicArn', TOPIC_ARN, 'must be empty or an SNS topic ARN'));
  f.collect(() => {
    if (f.failed('alarmEmail') || f.failed('alarmTopicArn')) return;
    if (alarmEmail !== undefined && alarmTopicArn !== undefined) {
      throw f.fail(
        'alarmEmail',
        'cannot be combined with alarmTopicArn; subscribe the address to that topic yourself, or leave alarmTopicArn empty',
      );
    }
    if (!development && alarmEmail === undefined && alarmTopicArn === undefined) {
      throw f.fail(
        'alarmEmail',
        'or "alarmTopicArn" must be set: a stage that is not "development": true needs somewhere to send its alarms',
      );
    }
  });
  return { alarmEmail, alarmTopicArn };
}

type AlarmSettingKey =
  | 'silenceAlarmHours'
  | 'signatureRejectedAlarmThreshold'
  | 'undeliveredDigestHours'
  | 'queueAgeAlarmMinutes'
  | 'api5xxRatePercent'
  | 'api5xxMinCount';

function alarmSettings(f: ConfigFields): Collected<Pick<BridgeConfig, AlarmSettingKey>> {
  return {
    // Period 1 h × this many evaluation periods; CloudWatch allows up to 7 days for hourly periods.
    silenceAlarmHours: f.collect(() => f.integer('silenceAlarmHours', 1, 168)),
    signatureRejectedAlarmThreshold: f.collect(() => f.integer('signatureRejectedAlarmThreshold', 1, 1_000_000)),
    // Two periods of this length are evaluated; 2 × 84 h stays inside CloudWatch's 7-day window.
    undeliveredDigestHours: f.collect(() => f.integer('undeliveredDigestHours', 1, 84)),
    queueAgeAlarmMinutes: f.collect(() => f.integer('queueAgeAlarmMinutes', 5, 1440)),
    api5xxRatePercent: f.collect(() => f.number('api5xxRatePercent', 0.1, 100)),
    api5xxMinCount: f.collect(() => f.integer('api5xxMinCount', 1, 1_000_000)),
  };
}

function logRetentionDays(f: ConfigFields): BridgeConfig['logRetentionDays'] {
  const days = f.integer('logRetentionDays', 1, 3653);
  const match = LOG_RETENTION_DAYS.find((allowed) => allowed === days);
  if (match === undefined)
    throw f.fail('logRetentionDays', `must be one of ${LOG_RETENTION_DAYS.join(', ')} (CloudWatch Logs values), got ${days}`);
  return match;
}

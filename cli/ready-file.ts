/**
 * The local stack's ready file (`npm start` writes it once everything listens): where each local
 * peer is and which secrets it uses, so `bridge --local READY_FILE …` works without AWS.
 *
 * The shape is `ReadyInfo` in local/ready-info.ts (`secrets` is the signing secrets, `slackApiUrl` null when
 * a real Slack is used). Read tolerantly: only the fields a command needs must be present. `secrets` may be a JSON array
 * of signing secrets, a string (one per line), or an object with `signing` / `signingSecrets`,
 * `readApiKey` and `slackToken`.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { CliError } from './errors';
import type { ReadyConnection, ReadyInfo } from '../local/ready-info';
import { isRecord } from '../shared/util';

const DEFAULT_READY_FILE_HINT = '.local/ready.json';

/** The fields the CLI reads, by their names in the file (a rename in ReadyInfo fails here). */
type ReadyField = keyof ReadyInfo;
const field = (name: ReadyField): ReadyField => name;

export { LOCAL_SLACK_TOKEN } from '../local/ready-info';

export interface LocalReady {
  path: string;
  webhookUrl: string | undefined;
  signingSecrets: string[];
  simulatorUrl: string | undefined;
  /** The read-API key of the simulator. */
  apiKey: string | undefined;
  projectIds: string[];
  sqsEndpoint: string | undefined;
  queueUrl: string | undefined;
  dlqUrl: string | undefined;
  dynamoEndpoint: string | undefined;
  tableName: string | undefined;
  slackApiUrl: string | undefined;
  /** Any token works against the local Slack server unless it was started with a token list. */
  slackToken: string | undefined;
  /** `slackChannel` in the file `npm start` writes. */
  slackDefaultChannel: string | undefined;
  slackProjectChannels: Record<string, string>;
  region: string | undefined;
  secretsManagerEndpoint: string | undefined;
  signingSecretsSecretId: string | undefined;
  readApiKeySecretId: string | undefined;
  slackTokenSecretId: string | undefined;
  eventsUrl: string | undefined;
  /** The browser preview of the local Slack; undefined with a real Slack. */
  previewUrl: string | undefined;
  /** Whether `simulatorUrl` is the simulator (its control routes finish runs), not the real service. */
  simulatorRuns: boolean;
  /** The process of `npm start` that wrote it. */
  pid: number | undefined;
  /** `npm start -- --connections N`'s clients (`--connection <id>`); those missing a field are left out. */
  connections: ReadyConnection[];
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string')
    return value
      .split(/[\n,]/)
      .map((item) => item.trim())
      .filter((item) => item !== '');
  if (!Array.isArray(value)) return [];
  return value
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function stringMap(value: unknown): Record<string, string> {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return {};
    }
  }
  if (!isRecord(parsed)) return {};
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(parsed)) {
    const text = str(item);
    if (text !== undefined) out[key] = text;
  }
  return out;
}

function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

export function parseReadyFile(raw: unknown, path: string): LocalReady {
  if (!isRecord(raw))
    throw new CliError(`ready file ${path} is not a JSON object`, 'start the local stack with `npm start` and pass the file it writes');
  const secrets = raw['secrets'];
  let signing: string[];
  let readApiKey: string | undefined;
  let slackToken: string | undefined;
  if (isRecord(secrets)) {
    signing = strings(secrets['signing'] ?? secrets['signingSecrets'] ?? secrets['signing_secrets']);
    readApiKey = str(secrets['readApiKey'] ?? secrets['read_api_key']);
    slackToken = str(secrets['slackToken'] ?? secrets['slackBotToken'] ?? secrets['slack_token']);
  } else {
    signing = strings(secrets);
  }
  if (signing.length === 0) signing = strings(raw['signingSecrets']);
  return {
    path,
    webhookUrl: str(raw[field('webhookUrl')]),
    signingSecrets: signing,
    simulatorUrl: str(raw[field('simulatorUrl')]),
    apiKey: str(raw[field('apiKey')]) ?? readApiKey,
    projectIds: strings(raw[field('projectIds')]),
    sqsEndpoint: str(raw[field('sqsEndpoint')]),
    queueUrl: str(raw[field('queueUrl')]),
    dlqUrl: str(raw[field('dlqUrl')]),
    dynamoEndpoint: str(raw[field('dynamoEndpoint')]),
    tableName: str(raw[field('tableName')]),
    slackApiUrl: str(raw[field('slackApiUrl')]),
    slackToken: str(raw['slackToken']) ?? slackToken,
    slackDefaultChannel: str(raw['slackDefaultChannel']) ?? str(raw[field('slackChannel')]),
    slackProjectChannels: stringMap(raw['slackProjectChannels']),
    region: str(raw[field('region')]),
    secretsManagerEndpoint: str(raw[field('secretsManagerEndpoint')]),
    signingSecretsSecretId: str(raw[field('signingSecretsSecretId')]),
    readApiKeySecretId: str(raw[field('readApiKeySecretId')]),
    slackTokenSecretId: str(raw[field('slackTokenSecretId')]),
    eventsUrl: str(raw[field('eventsUrl')]),
    previewUrl: str(raw[field('previewUrl')]),
    simulatorRuns: isRecord(raw[field('ports')]) && typeof (raw[field('ports')] as Record<string, unknown>)['simulator'] === 'number',
    pid: numberOrUndefined(raw[field('pid')]),
    connections: Array.isArray(raw[field('connections')]) ? (raw[field('connections')] as unknown[]).flatMap(readyConnectionOf) : [],
  };
}

function readyConnectionOf(raw: unknown): ReadyConnection[] {
  if (!isRecord(raw)) return [];
  const [id, webhookUrl, simulatorUrl, apiKey, slackTeamId, slackTeamName, slackChannel] = [
    'id',
    'webhookUrl',
    'simulatorUrl',
    'apiKey',
    'slackTeamId',
    'slackTeamName',
    'slackChannel',
  ].map((key) => str(raw[key]));
  const secrets = strings(raw['secrets']);
  if (!id || !webhookUrl || !simulatorUrl || !apiKey || !slackTeamId || !slackChannel || secrets.length === 0) return [];
  const projectIds = strings(raw['projectIds']);
  return [
    { id, webhookUrl, secrets, simulatorUrl, apiKey, projectIds, slackTeamId, slackTeamName: slackTeamName ?? slackTeamId, slackChannel },
  ];
}

/** The client `--connection <id>` names in the local stack's ready file, or a CliError listing those it has. */
export function readyConnection(ready: LocalReady, id: string): ReadyConnection {
  const found = ready.connections.find((c) => c.id === id);
  if (found !== undefined) return found;
  const known = ready.connections.map((c) => c.id);
  throw new CliError(
    `the local stack of ${ready.path} has no connection "${id}"`,
    known.length > 0 ? `use one of ${known.join(', ')}` : 'start it with clients: `npm start -- --connections 2` (client-a, client-b)',
    'not_found',
  );
}

export async function readReadyFile(path: string): Promise<LocalReady> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new CliError(
      `cannot read the ready file ${path}${typeof code === 'string' ? ` (${code})` : ''}`,
      `start the local stack with \`npm start\` (it writes ${DEFAULT_READY_FILE_HINT} once it is up; \`npm start -- --ready-file FILE\` writes FILE) and pass that path to --local`,
      'no_ready_file',
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CliError(`ready file ${path} is not JSON`, 'pass the file `npm start` writes', 'bad_ready_file');
  }
  return parseReadyFile(raw, path);
}

/** A field of the ready file a command needs, or a CliError naming it. */
export function needLocal<T>(ready: LocalReady, value: T | undefined, field: string): T {
  if (value === undefined) {
    throw new CliError(
      `ready file ${ready.path} has no ${field}`,
      'restart the local stack (`npm start`) so it writes a complete ready file',
      'bad_ready_file',
    );
  }
  return value;
}

/** Whether the process that wrote the ready file still runs (a ready file left by a crash is stale). */
export function isLive(ready: LocalReady): boolean {
  if (ready.pid === undefined) return true;
  try {
    process.kill(ready.pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code === 'EPERM';
  }
}

/** The default ready file when it exists and its stack still runs, else why not (for the refusal). */
export async function findDefaultReadyFile(path: string): Promise<{ ready: LocalReady } | { ready: undefined; why: string }> {
  let ready: LocalReady;
  try {
    ready = await readReadyFile(path);
  } catch {
    return { ready: undefined, why: `no ${shortPath(path)}` };
  }
  if (isLive(ready)) return { ready };
  return { ready: undefined, why: `${shortPath(path)} is left from an \`npm start\` that no longer runs (pid ${ready.pid ?? '?'})` };
}

/** The path relative to the working directory when it is below it, else as given. */
export function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

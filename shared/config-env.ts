/**
 * Reading configuration from the environment. Every reader names the variable in its error, so a
 * bad deployment fails at cold start with a message that says what to fix.
 */
/** A setting that can't be used: `variable` names it (an environment variable; a stage file's key in infra/config-fields.ts). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    problem: string,
    message = `Configuration error: ${variable} ${problem}`,
  ) {
    super(message);
  }

  /** A stage file's key that can't be used (read at synth): names the key and the file to fix it in. */
  static inFile(key: string, file: string, problem: string): ConfigError {
    return new ConfigError(key, problem, `${file}: "${key}" ${problem}. Fix "${key}" in ${file}.`);
  }
}

import { CHANNEL_ID_HINT, isHomeChannelId } from './routing';

export type Env = Readonly<Record<string, string | undefined>>;

export function requiredString(env: Env, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigError(name, 'is not set; set it to a non-empty value');
  return value;
}

export function optionalString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function url(env: Env, name: string): string {
  const value = requiredString(env, name);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${value}"`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ConfigError(name, `must use http or https, got "${parsed.protocol}"`);
  }
  return value.replace(/\/+$/, '');
}

/** A JSON object of string → string (e.g. the project → Slack channel map). Empty when unset. */
export function stringMap(env: Env, name: string): Record<string, string> {
  const raw = env[name]?.trim();
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'must be a JSON object such as {"<project id>": "C0123ABCD"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(name, 'must be a JSON object such as {"<project id>": "C0123ABCD"}');
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new ConfigError(name, `has a non-string or empty value for key "${key}"`);
    }
    out[key] = value.trim();
  }
  return out;
}

/**
 * The home channel `name` holds, which must be a channel id: a name would key the same channel twice
 * (Slack reports clicks by id), and a run would be posted twice there. `stageKey` is where to fix it.
 */
export function channelId(env: Env, name: string, stageKey: string): string {
  return checkedChannelId(requiredString(env, name), name, stageKey);
}

/** The project → home channel map `name` holds (JSON), every channel an id (see `channelId`). */
export function channelIdMap(env: Env, name: string, stageKey: string): Record<string, string> {
  const channels = stringMap(env, name);
  for (const [project, channel] of Object.entries(channels)) checkedChannelId(channel, name, `${stageKey}.${project}`);
  return channels;
}

function checkedChannelId(channel: string, name: string, stageKey: string): string {
  if (isHomeChannelId(channel)) return channel;
  throw new ConfigError(
    name,
    `holds ${JSON.stringify(channel.slice(0, 80))}, which is not a channel id; the stage file's "${stageKey}" ${CHANNEL_ID_HINT}, then deploy again`,
  );
}

const SECRET_LIST_EXAMPLE = '["whsec_current"] (or ["whsec_new", "whsec_old"] while rotating)';

/**
 * Parses the webhook signing secrets: a JSON array of strings, nothing else (a secret may hold a
 * comma, so a comma- or line-separated list would split it). Whitespace around each secret is
 * dropped: a trailing newline pasted into a secret store must not make every signature fail.
 */
export function parseSecretList(raw: string, name: string): string[] {
  const secrets = jsonStringArray(raw.trim(), name, `must be a JSON array of strings such as ${SECRET_LIST_EXAMPLE}`);
  if (secrets.length === 0) throw new ConfigError(name, 'holds no signing secret; put at least one');
  return secrets;
}

const SLACK_SIGNING_SECRET_EXAMPLE =
  'the signing secret as Slack shows it (Basic Information → App Credentials), e.g. 8f742231b10e8888abcd99yyyzzz85a5, ' +
  'or a JSON array such as ["<new secret>", "<old secret>"] while it is regenerated';

/** Slack's signing secrets are hex; any visible ASCII is accepted, so a pasted quote or line break is caught. */
const SLACK_SECRET_CHARACTERS = /^[\x21-\x7e]+$/;

/**
 * Parses the Slack app's signing secret as Slack gives it: the plain value (trimmed), or a JSON array
 * of them while the secret is regenerated. Nothing else: a value holding whitespace (two secrets on
 * two lines, say) or quotes would verify nothing, so it is refused here with what to put instead.
 * Errors never contain the value.
 */
export function parseSlackSigningSecret(raw: string, name: string): string[] {
  const value = raw.trim();
  const mustBe = `must be ${SLACK_SIGNING_SECRET_EXAMPLE}`;
  if (value === '') throw new ConfigError(name, `is empty; it ${mustBe}`);
  const secrets = value.startsWith('[') ? jsonStringArray(value, name, mustBe) : [value];
  if (secrets.length === 0) throw new ConfigError(name, `holds no signing secret; it ${mustBe}`);
  for (const secret of secrets) {
    if (!SLACK_SECRET_CHARACTERS.test(secret) || /^["'{]/.test(secret)) {
      throw new ConfigError(name, `${mustBe}; its value holds a space, a line break, a quote or a character that is not ASCII`);
    }
  }
  return secrets;
}

/** The trimmed, non-empty strings of a JSON array; `mustBe` says what the value should be when it isn't one. */
function jsonStringArray(text: string, name: string, mustBe: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(name, `${mustBe}; its value is not JSON`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(name, mustBe);
  return parsed
    .map((item: unknown) => {
      if (typeof item !== 'string') throw new ConfigError(name, `${mustBe}; the array must hold only strings`);
      return item.trim();
    })
    .filter((item) => item.length > 0);
}

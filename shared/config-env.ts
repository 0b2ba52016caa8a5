/**
 * Reading configuration from the environment. Every reader names the variable in its error, so a
 * bad deployment fails at cold start with a message that says what to fix.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Configuration error: ${variable} ${problem}`);
  }
}

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
    throw new ConfigError(name, 'must be a JSON object such as {"<project id>": "#channel"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(name, 'must be a JSON object such as {"<project id>": "#channel"}');
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

const SECRET_LIST_EXAMPLE = '["whsec_current"] (or ["whsec_new", "whsec_old"] while rotating)';

/**
 * Parses the webhook signing secrets: a JSON array of strings, nothing else (a secret may hold a
 * comma, so a comma- or line-separated list would split it). Whitespace around each secret is
 * dropped: a trailing newline pasted into a secret store must not make every signature fail.
 */
export function parseSecretList(raw: string, name: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.trim());
  } catch {
    throw new ConfigError(name, `must be a JSON array of strings such as ${SECRET_LIST_EXAMPLE}; its value is not JSON`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(name, `must be a JSON array of strings such as ${SECRET_LIST_EXAMPLE}`);
  const secrets = parsed
    .map((item: unknown) => {
      if (typeof item !== 'string') throw new ConfigError(name, `must hold only strings, such as ${SECRET_LIST_EXAMPLE}`);
      return item.trim();
    })
    .filter((item) => item.length > 0);
  if (secrets.length === 0) throw new ConfigError(name, 'holds no signing secret; put at least one');
  return secrets;
}

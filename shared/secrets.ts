/**
 * Secret values as the domain uses them: single-valued secrets trimmed and checked, and the
 * verifiers of signing secrets rebuilt when their secret rotates. Secrets Manager itself is an
 * adapter (adapters/secrets-manager); locally (npm start, tests) a static value stands in for it.
 */
import { parseSecretList } from './config-env';
import { INGEST_DEFAULTS, INGEST_METRICS, SECRET_PLACEHOLDER, type MetricName } from './contracts';
import { NeedsOperatorFix, SecretNotSet } from './errors';
import { describeError } from './observability';
import type { Clock, Log, Metrics, SecretReadOptions, SecretSource } from './ports';
import { createSignatureVerifier, type SignatureVerifier } from './signature';

/** The value the stack puts in a secret it creates; a secret still holding it is "not set". */
export { SECRET_PLACEHOLDER };

export function staticSecret(value: string, description = 'environment'): SecretSource {
  return { get: () => Promise.resolve(value), description };
}

/** Trimmed value of a single-valued secret (API key, bot token). */
export async function readSecretValue(source: SecretSource): Promise<string> {
  const value = (await source.get()).trim();
  if (value === '' || value === SECRET_PLACEHOLDER) throw new SecretNotSet(source.description);
  return value;
}

/**
 * Why `value` cannot be sent in an HTTP header (fetch would throw a TypeError quoting it), or
 * undefined when it can. Says where, never what: the value is a credential.
 */
export function headerValueProblem(value: string): string | undefined {
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    const at = `at character ${index + 1}`;
    if (code === 0x0a || code === 0x0d) return `a line break ${at}`;
    // Tab is allowed in a header value; other control characters and DEL are not.
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return `a control character ${at}`;
    if (code > 0xff) return `a character outside Latin-1 ${at} (a pasted curly quote or dash?)`;
  }
  return undefined;
}

/** A secret that cannot be used as it is (it can't go in a header): retrying won't help, putting it again will. */
export function unusableSecret(secretName: string, problem: string): NeedsOperatorFix {
  const fix = `fix the secret ${secretName}: put the value again exactly as issued, on one line`;
  return new NeedsOperatorFix(`Secret ${secretName} holds ${problem}, which cannot be sent in an HTTP header; ${fix}`, fix);
}

/**
 * Trimmed value of a secret sent in an HTTP header (read-API key, Slack bot token), checked once
 * when read: a value fetch would refuse fails with "fix the secret <name>" (an operator fix, not a
 * network failure), and never shows up in a message.
 */
export async function readHeaderSecretValue(source: SecretSource): Promise<string> {
  const value = await readSecretValue(source);
  const problem = headerValueProblem(value);
  if (problem !== undefined) throw unusableSecret(source.description, problem);
  return value;
}

/** The clock, sinks and time limits of a secret-verifier cache. */
export interface SecretVerifierOptions {
  clock: Clock;
  log: Log;
  metrics: Metrics;
  /** Longest wait between reads after failed ones: the secret's cache age. */
  maxBackoffMs: number;
  /** How long the last good verifier serves while the secret cannot be read (default 1 hour). */
  maxStaleMs?: number | undefined;
  /**
   * How long one read may take before the cache answers without it (the last good verifier, or the
   * error: a 503). The Slack function sets it so an answer is out well within Slack's 3 s; unset, a
   * read takes as long as the source's own timeouts.
   */
  readTimeoutMs?: number | undefined;
}

/**
 * A secret that verifies signatures: how its value becomes a verifier, and what the cache says and
 * counts when it can't. One per secret kind (webhook signing secrets, the Slack signing secret).
 */
export interface VerifierSecretKind<V> {
  /** What the secret is, in log lines and errors: 'signing secrets', 'Slack signing secret'. */
  label: string;
  /** The secrets in a value; throws an error that says what a good value looks like (never the value). */
  parse(text: string, secretName: string): string[];
  build(secrets: string[]): V;
  metrics: { invalid: MetricName; unreadable: MetricName };
  /** What to put when the value is invalid, and the command that writes it. */
  putFix: string;
  /** What is refused once the last good verifier is too old, e.g. 'deliveries', 'Slack requests'. */
  refused: string;
}

export interface SigningVerifierOptions extends SecretVerifierOptions {
  toleranceSeconds: number;
}

/** The first wait after a failed read; doubled per failure up to `maxBackoffMs`. */
export const FIRST_BACKOFF_MS = 1000;

/** The webhook's signing secrets: a JSON array, verified as the service signs (shared/signature). */
export function webhookSigningSecretsKind(toleranceSeconds: number): VerifierSecretKind<SignatureVerifier> {
  return {
    label: 'signing secrets',
    parse: parseSecretList,
    build: (secrets) => createSignatureVerifier({ secrets, toleranceSeconds }),
    metrics: { invalid: INGEST_METRICS.signingSecretsInvalid, unreadable: INGEST_METRICS.signingSecretsUnreadable },
    putFix: 'put a JSON array of strings, e.g. ["whsec_…"] (`npx bridge secrets signing add` writes it)',
    refused: 'deliveries',
  };
}

/** The webhook signature verifier for the current signing secrets (see `verifierFromSecret`). */
export function signingVerifierFrom(source: SecretSource, options: SigningVerifierOptions): () => Promise<SignatureVerifier> {
  return verifierFromSecret(source, webhookSigningSecretsKind(options.toleranceSeconds), options);
}

/**
 * The verifier for a signing secret's current value, rebuilt only when the secret's text changes
 * (so a request costs one HMAC per live secret). Failures keep verification on:
 * - a new value that does not parse keeps the last good verifier, logged once and counted on every
 *   use (`kind.metrics.invalid`), so an alarm stays red until it is fixed;
 * - a failed read (placeholder, deleted, AccessDenied, outage) keeps the last good verifier for at
 *   most `maxStaleMs` after it was last read, then requests are refused with an error saying the fix;
 * - after a failed read the secret is not read again before a backoff (1 s doubling up to the
 *   cache age) counted from the moment the read failed (not from when it started: a slow failure
 *   would otherwise leave no backoff at all), so a Secrets Manager brown-out doesn't cost every
 *   request a slow call;
 * - with `readTimeoutMs`, a read that takes longer is given up on (`SecretReadTimedOut`), a failure
 *   like any other.
 */
export function verifierFromSecret<V>(source: SecretSource, kind: VerifierSecretKind<V>, options: SecretVerifierOptions): () => Promise<V> {
  const cache = new VerifierCache(source, kind, options);
  return () => cache.get();
}

interface GoodVerifier<V> {
  text: string;
  verifier: V;
  /** When the secret was last read (its value good, or bad but readable). */
  readAtMs: number;
}

class VerifierCache<V> {
  private good: GoodVerifier<V> | undefined;
  private badText: { text: string; error: unknown } | undefined;
  private failures = 0;
  private retryAtMs = 0;
  private lastError: unknown;

  constructor(
    private readonly source: SecretSource,
    private readonly kind: VerifierSecretKind<V>,
    private readonly options: SecretVerifierOptions,
  ) {}

  async get(): Promise<V> {
    const nowMs = this.options.clock.now();
    if (this.failures > 0 && nowMs < this.retryAtMs) return this.fallback(nowMs, this.lastError);
    let text: string;
    try {
      text = await this.source.get(this.readOptions());
    } catch (error) {
      const failedAtMs = this.options.clock.now();
      this.noteFailure(failedAtMs, error);
      return this.fallback(failedAtMs, error);
    }
    this.failures = 0;
    return this.fromText(text, nowMs);
  }

  private readOptions(): SecretReadOptions | undefined {
    const timeoutMs = this.options.readTimeoutMs;
    return timeoutMs === undefined ? undefined : { timeoutMs };
  }

  private fromText(text: string, nowMs: number): V {
    if (this.good !== undefined && text === this.good.text) {
      this.good.readAtMs = nowMs;
      return this.good.verifier;
    }
    if (text !== this.badText?.text) {
      const secrets = this.parseOrRemember(text);
      if (secrets !== undefined) {
        this.good = { text, verifier: this.kind.build(secrets), readAtMs: nowMs };
        return this.good.verifier;
      }
    }
    // The value is invalid: alarm on every use, serve the last good secrets if there are any.
    this.options.metrics.count(this.kind.metrics.invalid);
    if (this.good === undefined) throw asError(this.badText?.error, this.kind.label);
    this.good.readAtMs = nowMs;
    return this.good.verifier;
  }

  /** The secrets in `text`, or undefined after logging (once per value) why it is invalid. */
  private parseOrRemember(text: string): string[] | undefined {
    try {
      const secrets = this.kind.parse(text, this.source.description);
      this.badText = undefined;
      return secrets;
    } catch (error) {
      this.badText = { text, error };
      this.options.log.error(`${this.kind.label} secret holds an invalid value; the last good value stays in use`, {
        secret: this.source.description,
        problem: error instanceof Error ? error.message : String(error),
        fix: this.kind.putFix,
      });
      return undefined;
    }
  }

  private noteFailure(nowMs: number, error: unknown): void {
    this.failures += 1;
    this.lastError = error;
    const backoffMs = Math.min(
      Math.max(this.options.maxBackoffMs, FIRST_BACKOFF_MS),
      FIRST_BACKOFF_MS * 2 ** Math.min(this.failures - 1, 30),
    );
    this.retryAtMs = nowMs + backoffMs;
    this.options.metrics.count(this.kind.metrics.unreadable);
    this.options.log.warn(`${this.kind.label} could not be read; trying again after a backoff`, {
      secret: this.source.description,
      backoffMs,
      ...describeError(error),
    });
  }

  private fallback(nowMs: number, error: unknown): V {
    if (this.good === undefined) throw asError(error, this.kind.label);
    const maxStaleMs = this.options.maxStaleMs ?? DEFAULT_MAX_STALE_MS;
    if (nowMs - this.good.readAtMs <= maxStaleMs) return this.good.verifier;
    // The fix goes in the message too: the callers log name and message only.
    const fix = `restore the secret and the function's secretsmanager:GetSecretValue permission, or put its value again: ${this.kind.putFix}`;
    throw new NeedsOperatorFix(
      `${this.kind.label} ${this.source.description} unreadable for over ${Math.round(maxStaleMs / 60_000)} minutes; ${this.kind.refused} are refused (503) until they can be read. Fix: ${fix}`,
      fix,
      { cause: error },
    );
  }
}

const DEFAULT_MAX_STALE_MS = INGEST_DEFAULTS.secretsMaxStaleSeconds * 1000;

function asError(error: unknown, label: string): Error {
  return error instanceof Error ? error : new Error(`${label} could not be used: ${String(error)}`);
}

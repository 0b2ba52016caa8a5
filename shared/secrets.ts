/**
 * Secret values as the domain uses them: single-valued secrets trimmed and checked, and the signing
 * verifier rebuilt when its secret rotates. Secrets Manager itself is an adapter
 * (adapters/secrets-manager); locally (npm start, tests) a static value stands in for it.
 */
import { parseSecretList } from './config-env';
import { INGEST_DEFAULTS, INGEST_METRICS, SECRET_PLACEHOLDER } from './contracts';
import { NeedsOperatorFix, SecretNotSet } from './errors';
import { describeError } from './observability';
import type { Clock, Log, Metrics, SecretSource } from './ports';
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

export interface SigningVerifierOptions {
  toleranceSeconds: number;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  /** Longest wait between reads after failed ones: the secret's cache age. */
  maxBackoffMs: number;
  /** How long the last good verifier serves while the secret cannot be read (default 1 hour). */
  maxStaleMs?: number | undefined;
}

/** The first wait after a failed read; doubled per failure up to `maxBackoffMs`. */
export const FIRST_BACKOFF_MS = 1000;

/**
 * The signature verifier for the current signing secrets, rebuilt only when the secret's text
 * changes (so a delivery costs one HMAC per live secret). Failures keep the webhook on:
 * - a new value that does not parse keeps the last good verifier, logged once and counted on every
 *   use (SigningSecretsInvalid), so an alarm stays red until it is fixed;
 * - a failed read (placeholder, deleted, AccessDenied, outage) keeps the last good verifier for at
 *   most `maxStaleMs` after it was last read, then deliveries get 503 with a log line saying why;
 * - after a failed read the secret is not read again before a backoff (1 s doubling up to the
 *   cache age), so a Secrets Manager brown-out doesn't cost every delivery a slow call.
 */
export function signingVerifierFrom(source: SecretSource, options: SigningVerifierOptions): () => Promise<SignatureVerifier> {
  const cache = new SigningVerifierCache(source, options);
  return () => cache.get();
}

interface GoodVerifier {
  text: string;
  verifier: SignatureVerifier;
  /** When the secret was last read (its value good, or bad but readable). */
  readAtMs: number;
}

class SigningVerifierCache {
  private good: GoodVerifier | undefined;
  private badText: { text: string; error: unknown } | undefined;
  private failures = 0;
  private retryAtMs = 0;
  private lastError: unknown;

  constructor(
    private readonly source: SecretSource,
    private readonly options: SigningVerifierOptions,
  ) {}

  async get(): Promise<SignatureVerifier> {
    const nowMs = this.options.clock.now();
    if (this.failures > 0 && nowMs < this.retryAtMs) return this.fallback(nowMs, this.lastError);
    let text: string;
    try {
      text = await this.source.get();
    } catch (error) {
      this.noteFailure(nowMs, error);
      return this.fallback(nowMs, error);
    }
    this.failures = 0;
    return this.fromText(text, nowMs);
  }

  private fromText(text: string, nowMs: number): SignatureVerifier {
    if (this.good !== undefined && text === this.good.text) {
      this.good.readAtMs = nowMs;
      return this.good.verifier;
    }
    if (text !== this.badText?.text) {
      const secrets = this.parseOrRemember(text);
      if (secrets !== undefined) {
        this.good = {
          text,
          verifier: createSignatureVerifier({ secrets, toleranceSeconds: this.options.toleranceSeconds }),
          readAtMs: nowMs,
        };
        return this.good.verifier;
      }
    }
    // The value is invalid: alarm on every use, serve the last good secrets if there are any.
    this.options.metrics.count(INGEST_METRICS.signingSecretsInvalid);
    if (this.good === undefined) throw asError(this.badText?.error);
    this.good.readAtMs = nowMs;
    return this.good.verifier;
  }

  /** The secrets in `text`, or undefined after logging (once per value) why it is invalid. */
  private parseOrRemember(text: string): string[] | undefined {
    try {
      const secrets = parseSecretList(text, this.source.description);
      this.badText = undefined;
      return secrets;
    } catch (error) {
      this.badText = { text, error };
      this.options.log.error('signing secrets secret holds an invalid value; the last good secrets stay in use', {
        secret: this.source.description,
        problem: error instanceof Error ? error.message : String(error),
        fix: 'put a JSON array of strings, e.g. ["whsec_…"] (`bridge secrets signing add` writes it)',
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
    this.options.metrics.count(INGEST_METRICS.signingSecretsUnreadable);
    this.options.log.warn('signing secrets could not be read; trying again after a backoff', {
      secret: this.source.description,
      backoffMs,
      ...describeError(error),
    });
  }

  private fallback(nowMs: number, error: unknown): SignatureVerifier {
    if (this.good === undefined) throw asError(error);
    const maxStaleMs = this.options.maxStaleMs ?? DEFAULT_MAX_STALE_MS;
    if (nowMs - this.good.readAtMs <= maxStaleMs) return this.good.verifier;
    throw new NeedsOperatorFix(
      `signing secrets ${this.source.description} unreadable for over ${Math.round(maxStaleMs / 60_000)} minutes; deliveries are refused (503) until they can be read`,
      "restore the secret and the function's secretsmanager:GetSecretValue permission, or put its value again (`bridge secrets signing add`)",
      { cause: error },
    );
  }
}

const DEFAULT_MAX_STALE_MS = INGEST_DEFAULTS.secretsMaxStaleSeconds * 1000;

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(`signing secrets could not be used: ${String(error)}`);
}

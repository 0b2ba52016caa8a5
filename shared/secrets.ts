/**
 * Secrets read at run time with a cache, so a rotated secret takes effect within the cache age and
 * no redeploy is needed. Locally (npm start, tests) a static value stands in for Secrets Manager.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { parseSecretList } from './config-env';
import { createSignatureVerifier, type SignatureVerifier } from './signature';

/** The value the stack puts in a secret it creates; a secret still holding it is "not set". */
import { SECRET_PLACEHOLDER } from './contracts';
export { SECRET_PLACEHOLDER };

export class SecretNotSetError extends Error {
  override readonly name = 'SecretNotSetError';
  constructor(readonly secret: string) {
    super(`Secret ${secret} is empty or still the placeholder; put its value (see the stack outputs for the command)`);
  }
}

export interface SecretSource {
  /** Current value; cached by the implementation. */
  get(): Promise<string>;
  /** Where the value comes from, for messages (an ARN or "environment"); never the value. */
  readonly description: string;
}

export function staticSecret(value: string, description = 'environment'): SecretSource {
  return { get: () => Promise.resolve(value), description };
}

export function secretsManagerSecret(provider: SecretsProvider, secretId: string, maxAgeSeconds: number): SecretSource {
  return {
    description: secretId,
    async get() {
      const value = await provider.get(secretId, { maxAge: maxAgeSeconds });
      const text = typeof value === 'string' ? value : value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : '';
      if (text.trim() === '' || text.trim() === SECRET_PLACEHOLDER) throw new SecretNotSetError(secretId);
      return text;
    },
  };
}

/** A Secrets Manager provider with bounded timeouts (created once per container). */
export function createSecretsProvider(): SecretsProvider {
  return new SecretsProvider({
    clientConfig: { maxAttempts: 2, requestHandler: { requestTimeout: 1500, connectionTimeout: 1000, throwOnRequestTimeout: true } },
  });
}

/** Trimmed value of a single-valued secret (API key, bot token). */
export async function readSecretValue(source: SecretSource): Promise<string> {
  const value = (await source.get()).trim();
  if (value === '' || value === SECRET_PLACEHOLDER) throw new SecretNotSetError(source.description);
  return value;
}

/**
 * The signature verifier for the current signing secrets. Rebuilt only when the secret's text
 * changes, so the per-delivery cost stays one HMAC per live secret. When the secret cannot be
 * read, the last verifier built stays in use: a Secrets Manager outage after the cache expires
 * must not answer every delivery 503 (15 failures switch the webhook off).
 */
export function signingVerifierFrom(source: SecretSource, toleranceSeconds: number): () => Promise<SignatureVerifier> {
  let lastText: string | undefined;
  let verifier: SignatureVerifier | undefined;
  return async () => {
    let text: string;
    try {
      text = await source.get();
    } catch (error) {
      if (verifier !== undefined) return verifier;
      throw error;
    }
    if (verifier === undefined || text !== lastText) {
      verifier = createSignatureVerifier({ secrets: parseSecretList(text, source.description), toleranceSeconds });
      lastText = text;
    }
    return verifier;
  };
}

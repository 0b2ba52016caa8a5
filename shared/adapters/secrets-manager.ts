/** Secrets Manager through the Powertools provider: cached reads, so a rotated secret takes effect within the cache age. */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SECRET_PLACEHOLDER } from '../contracts';
import { SecretNotSet, SecretReadTimedOut } from '../errors';
import type { SecretReadOptions, SecretSource } from '../ports';

export function secretsManagerSecret(provider: SecretsProvider, secretId: string, maxAgeSeconds: number): SecretSource {
  return {
    description: secretId,
    async get(options: SecretReadOptions = {}) {
      const value = await withinTimeout(provider.get(secretId, { maxAge: maxAgeSeconds }), secretId, options.timeoutMs);
      const text = typeof value === 'string' ? value : value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : '';
      if (text.trim() === '' || text.trim() === SECRET_PLACEHOLDER) throw new SecretNotSet(secretId);
      return text;
    },
  };
}

/**
 * The read, or `SecretReadTimedOut` once `timeoutMs` has passed. Powertools' provider takes no abort
 * signal, so the read goes on and, when it lands, fills the provider's cache for the next request.
 */
async function withinTimeout<T>(read: Promise<T>, secretId: string, timeoutMs: number | undefined): Promise<T> {
  if (timeoutMs === undefined) return read;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SecretReadTimedOut(secretId, timeoutMs)), timeoutMs);
  });
  read.catch(() => undefined); // a read that fails after the timeout is nobody's to handle
  try {
    return await Promise.race([read, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Secrets Manager provider with bounded timeouts (created once per container). */
export function createSecretsProvider(): SecretsProvider {
  return new SecretsProvider({
    clientConfig: { maxAttempts: 2, requestHandler: { requestTimeout: 1500, connectionTimeout: 1000, throwOnRequestTimeout: true } },
  });
}

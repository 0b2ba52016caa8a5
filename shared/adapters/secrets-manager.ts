/** Secrets Manager through the Powertools provider: cached reads, so a rotated secret takes effect within the cache age. */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SECRET_PLACEHOLDER } from '../contracts';
import { SecretNotSet } from '../errors';
import type { SecretSource } from '../ports';

export function secretsManagerSecret(provider: SecretsProvider, secretId: string, maxAgeSeconds: number): SecretSource {
  return {
    description: secretId,
    async get() {
      const value = await provider.get(secretId, { maxAge: maxAgeSeconds });
      const text = typeof value === 'string' ? value : value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : '';
      if (text.trim() === '' || text.trim() === SECRET_PLACEHOLDER) throw new SecretNotSet(secretId);
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

/**
 * Secret values as the domain uses them: single-valued secrets trimmed and checked, and the signing
 * verifier rebuilt when its secret rotates. Secrets Manager itself is an adapter
 * (adapters/secrets-manager); locally (npm start, tests) a static value stands in for it.
 */
import { parseSecretList } from './config-env';
import { SECRET_PLACEHOLDER } from './contracts';
import { SecretNotSet } from './errors';
import type { SecretSource } from './ports';
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

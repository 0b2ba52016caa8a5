/**
 * The Slack request verifier for the current signing secret. Rebuilt only when the secret's text
 * changes; when the secret cannot be read, the last verifier built stays in use, so a Secrets
 * Manager outage after the cache expires does not refuse every click.
 */
import { parseSecretList } from '../config-env';
import type { SecretSource } from '../ports';
import { createSlackRequestVerifier, type SlackRequestVerifier } from '../slack-request-signature';

/** The secret holds one signing secret, or several (one per line, or a JSON array) while it is regenerated. */
export function slackVerifierFrom(source: SecretSource, toleranceSeconds: number): () => Promise<SlackRequestVerifier> {
  let lastText: string | undefined;
  let verifier: SlackRequestVerifier | undefined;
  return async () => {
    let text: string;
    try {
      text = await source.get();
    } catch (error) {
      if (verifier !== undefined) return verifier;
      throw error;
    }
    if (verifier === undefined || text !== lastText) {
      verifier = createSlackRequestVerifier({ signingSecrets: parseSecretList(text, source.description), toleranceSeconds });
      lastText = text;
    }
    return verifier;
  };
}

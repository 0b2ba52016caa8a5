/**
 * The Slack request verifier for the current signing secret, through the same cache as the webhook's
 * signing secrets (../secrets `verifierFromSecret`): rebuilt only when the secret's text changes; the
 * last good verifier kept when a bad value is put or the secret can't be read (for a bounded time);
 * failed reads backed off, so a Secrets Manager brown-out doesn't hold every click past Slack's 3 s.
 */
import { parseSlackSigningSecret } from '../config-env';
import { SLACK_APP_METRICS } from '../contracts';
import type { SecretSource } from '../ports';
import { verifierFromSecret, type SecretVerifierOptions, type VerifierSecretKind } from '../secrets';
import { createSlackRequestVerifier, type SlackRequestVerifier } from '../slack-request-signature';

export interface SlackVerifierSourceOptions extends SecretVerifierOptions {
  toleranceSeconds: number;
}

/** The Slack app's signing secret: as Slack shows it, or a JSON array of them while it is regenerated. */
export function slackSigningSecretKind(toleranceSeconds: number): VerifierSecretKind<SlackRequestVerifier> {
  return {
    label: 'Slack signing secret',
    parse: parseSlackSigningSecret,
    build: (signingSecrets) => createSlackRequestVerifier({ signingSecrets, toleranceSeconds }),
    metrics: { invalid: SLACK_APP_METRICS.slackSigningSecretInvalid, unreadable: SLACK_APP_METRICS.slackSigningSecretUnreadable },
    putFix:
      'put the signing secret as Slack shows it (Basic Information → App Credentials), or ["<new>", "<old>"] while regenerating it (`npx bridge secrets set slack-signing-secret` writes it)',
    refused: 'Slack requests',
  };
}

export function slackVerifierFrom(source: SecretSource, options: SlackVerifierSourceOptions): () => Promise<SlackRequestVerifier> {
  return verifierFromSecret(source, slackSigningSecretKind(options.toleranceSeconds), options);
}

/**
 * Which signatures a connection's webhook accepts: only that connection's own signing secrets, read
 * from its secret through the one verifier cache (../secrets.ts), one cache per connection, created
 * only for a connection the table knows (an unknown id in a URL costs a table read, never a secret read).
 */
import { INGEST_METRICS } from '../contracts';
import type { SecretSource } from '../ports';
import { verifierFromSecret, type SigningVerifierOptions, type VerifierSecretKind } from '../secrets';
import { createSignatureVerifier, type SignatureVerifier } from '../signature';
import { parseConnectionSecret, type Connection } from './model';
import type { ConnectionStore } from './ports';

export type ConnectionWebhook =
  | { kind: 'active'; connection: Connection; verifier: () => Promise<SignatureVerifier> }
  /** Removed by the operator: 410, so the service counts failures and switches the webhook off (spec §6). */
  | { kind: 'removed' }
  | { kind: 'unknown' };

export interface ConnectionWebhooks {
  /** The connection behind `/webhook/<id>`; throws when the table cannot be read (the sender retries on 503). */
  resolve(id: string): Promise<ConnectionWebhook>;
}

/** A connection secret's signing secrets, as the verifier cache reads them. */
function connectionSigningKind(toleranceSeconds: number): VerifierSecretKind<SignatureVerifier> {
  return {
    label: 'connection signing secrets',
    parse: (text, secretName) => parseConnectionSecret(text, secretName).signingSecrets,
    build: (secrets) => createSignatureVerifier({ secrets, toleranceSeconds }),
    metrics: { invalid: INGEST_METRICS.signingSecretsInvalid, unreadable: INGEST_METRICS.signingSecretsUnreadable },
    putFix: 'put the connection\'s secret again with `npx bridge connections rotate` (JSON {"readApiKey": …, "signingSecrets": [...]})',
    refused: "the connection's deliveries",
  };
}

export function connectionWebhooks(
  store: ConnectionStore,
  secretOf: (secretName: string) => SecretSource,
  options: SigningVerifierOptions,
): ConnectionWebhooks {
  const verifiers = new Map<string, () => Promise<SignatureVerifier>>();
  const kind = connectionSigningKind(options.toleranceSeconds);
  return {
    async resolve(id) {
      const record = await store.get(id);
      if (record === undefined) return { kind: 'unknown' };
      const connection = record.connection;
      if (connection.status === 'removed') return { kind: 'removed' };
      let verifier = verifiers.get(connection.secretName);
      if (verifier === undefined) {
        verifier = verifierFromSecret(secretOf(connection.secretName), kind, options);
        verifiers.set(connection.secretName, verifier);
      }
      return { kind: 'active', connection, verifier };
    },
  };
}

/**
 * `bridge doctor --connection <id>`: one tenant's checks instead of the stack's. The connection is
 * active; its secret holds a read-API key and signing secrets; the key works against its own base URL;
 * its webhook `/webhook/<id>` accepts a delivery signed with its first secret (a probe of a type the
 * bridge acknowledges and ignores, so nothing is digested); each Slack workspace it is linked to has an
 * installation. Its values are the live ones (the table and Secrets Manager), on the local stack too.
 */
import { randomUUID } from 'node:crypto';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { connectionWebhookUrl, parseConnectionSecret, type Connection, type ConnectionSecret } from '../../shared/connections/model';
import type { WebhookEvent } from '../../shared/ports';
import type { Parsed } from '../args';
import { dynamoClient, endpointFor } from '../aws';
import { CliError } from '../errors';
import type { CliIo } from '../io';
import type { CommandResult } from '../result';
import { targetOf, type Target } from './connections';
import { checkReadApi, doctorResult, fail, ok, say, warn, type Check } from './doctor-checks';
import { deliveryHeaders, postDelivery } from './send';
import { fingerprint, readSecret } from './secrets';

/** The probe's event type: signed as the service signs, acknowledged by the bridge and never queued (an unhandled type). */
export const PROBE_EVENT_TYPE = 'bridge.doctor_probe';

/** The connection and its live secret, or a CliError saying what is wrong with either. */
export async function liveConnection(target: Target, id: string): Promise<{ connection: Connection; secret: ConnectionSecret }> {
  const record = await target.store.get(id);
  if (record === undefined || record.connection.status !== 'active')
    throw new CliError(
      `no active connection ${id}${record === undefined ? '' : ' (it was removed)'}`,
      `see \`${target.ctx.hint('connections list')}\``,
      'not_found',
    );
  const { connection } = record;
  const text = await readSecret(target.sm, { id: connection.secretName, endpoint: endpointFor(target.ctx.settings, 'secretsmanager') });
  try {
    return { connection, secret: parseConnectionSecret(text ?? '', connection.secretName) };
  } catch (error) {
    throw new CliError(
      error instanceof Error ? error.message : String(error),
      `remove the connection and add it again (\`${target.ctx.hint(`connections remove ${id}`)}\`)`,
      'bad_secret',
    );
  }
}

export async function doctorConnection(parsed: Parsed, io: CliIo, id: string): Promise<CommandResult> {
  const target = await targetOf(parsed, io);
  const checks: Check[] = [];
  const add = (check: Check): void => {
    checks.push(check);
    say(target.ctx.out, check);
  };
  try {
    let live: { connection: Connection; secret: ConnectionSecret };
    try {
      live = await liveConnection(target, id);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      add(fail('connection', `connection ${id}`, error.message, error.fix));
      return doctorResult(target.ctx.out, checks);
    }
    const { connection, secret } = live;
    add(
      ok(
        'connection',
        `connection ${id}`,
        `active; read API ${connection.baseUrl}; signing ${secret.signingSecrets.map(fingerprint).join(', ')}`,
      ),
    );
    add(await checkReadApi(connection.baseUrl, secret.readApiKey, target.ctx.fetch, target.ctx.hint));
    add(await checkWebhook(target, id, secret.signingSecrets[0] ?? ''));
    for (const check of await checkInstallations(target, connection)) add(check);
    return doctorResult(target.ctx.out, checks);
  } finally {
    target.close();
  }
}

async function checkWebhook(target: Target, id: string, signingSecret: string): Promise<Check> {
  const title = `webhook of ${id}`;
  if (target.webhookUrl === undefined) return fail('connection.webhook', title, "the stack's WebhookUrl is unknown", 'redeploy the stack');
  const url = connectionWebhookUrl(target.webhookUrl, id);
  const event: WebhookEvent = { id: randomUUID(), type: PROBE_EVENT_TYPE, created_at: new Date(target.ctx.now()).toISOString(), data: {} };
  const body = JSON.stringify(event);
  const headers = deliveryHeaders(event, body, signingSecret, Math.floor(target.ctx.now() / 1000));
  const result = await postDelivery(target.ctx.fetch, url, body, headers, target.ctx.now);
  if (result.ok) return ok('connection.webhook', title, `${url} accepted a probe signed with its secret (HTTP ${result.status})`);
  const fix: Record<number, string> = {
    401: `the webhook refuses its own secret: \`${target.ctx.hint(`connections list`)}\` shows the fingerprints the bridge holds`,
    404: `the API does not know ${id}: is the stack deployed with connections?`,
    410: `the connection was removed; add it again`,
  };
  return fail(
    'connection.webhook',
    title,
    `${url} answered ${result.status ?? result.error ?? 'nothing'}`,
    fix[result.status ?? 0] ?? 'see `npx bridge tail` or the ingest logs',
  );
}

/** Each linked workspace has an installation; none linked: its digests go out with the stack's own bot token. */
async function checkInstallations(target: Target, connection: Connection): Promise<Check[]> {
  const title = 'Slack installations';
  if (connection.slackTeamIds.length === 0)
    return [warn('connection.slack', title, "linked to no Slack workspace: its digests post with the stack's own bot token")];
  const dynamo = dynamoClient(target.ctx.settings);
  try {
    const store = new DynamoInstallationStore(dynamo, { tableName: target.tableName });
    const missing: string[] = [];
    for (const team of connection.slackTeamIds) if ((await store.get(team)) === undefined) missing.push(team);
    if (missing.length === 0) return [ok('connection.slack', title, `installed in ${connection.slackTeamIds.join(', ')}`)];
    return [
      fail(
        'connection.slack',
        title,
        `not installed in ${missing.join(', ')}`,
        "send the workspace's admin to the bridge's /slack/install page (SlackInstallUrl)",
      ),
    ];
  } finally {
    dynamo.destroy();
  }
}

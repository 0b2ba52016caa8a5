/**
 * The Slack function reading its signing secret from Secrets Manager as deployed (by ARN, through
 * Powertools' provider), against the local Secrets Manager server (issue 19): the plain value the
 * stack output's put-secret-value command puts is accepted; a bad value put into a warm container
 * keeps the last good one and alarms; an unreadable secret is backed off instead of read (and waited
 * for) on every request.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PutSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createSlackHandler } from '../../functions/slack/create-handler';
import { LocalSecretsManagerServer, createSecretsManagerClient } from '../../local/secrets-manager-server';
import { ENV, HTTP_PATHS, SECRET_PLACEHOLDER, SLACK_APP_METRICS } from '../../shared/contracts';
import { FIRST_BACKOFF_MS } from '../../shared/secrets';
import { SLACK_SECRET_READ_TIMEOUT_MS } from '../../functions/slack/runtime';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { useLocalSecretsManager } from '../support/digest-peers';

const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NEW_SLACK_SECRET = '0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f6';
const NOW = Date.parse('2026-03-02T09:00:00Z');
/** Nothing here may reach SQS (help is answered inline; refusals touch nothing): a closed port fails loudly. */
const NOWHERE = 'http://127.0.0.1:9';
const TABLE = 'slack-signing-secret-test';
/** A verified request is recorded by the replay guard, so the table is real (dynalite). */
let dynamo: LocalDynamo;

let server: LocalSecretsManagerServer;
let client: SecretsManagerClient;
let restoreProcessEnv: () => void = () => undefined;
let secretCounter = 0;

beforeAll(async () => {
  server = await LocalSecretsManagerServer.start();
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  client = createSecretsManagerClient(server.url);
  restoreProcessEnv = useLocalSecretsManager(server.url);
});

afterAll(async () => {
  restoreProcessEnv();
  client.destroy();
  await server.close();
  await dynamo.close();
});

let secretName: string;
beforeEach(() => {
  secretName = `bridge/test/slack-signing-${++secretCounter}`;
});

/** A Slack function whose signing secret is `secretId`, read afresh on every request (cache age 0), on a clock the test moves. */
function slackFunction(secretId: string) {
  const observer = new RecordingObserver();
  const clock = { ms: NOW, now: () => clock.ms };
  const env = {
    [ENV.tableName]: TABLE,
    [ENV.commandsQueueUrl]: `${NOWHERE}/000000000000/never`,
    [ENV.slackSigningSecretSecretArn]: secretId,
    [ENV.secretsCacheSeconds]: '0',
    [ENV.slackTeamIds]: 'T0TEAM1',
    [ENV.slackAppId]: 'A0BRIDGE',
    [ENV.actionSigningKey]: 'slack-signing-secret-test-action-key-0123456789',
    [ENV.awsRegion]: 'us-east-1',
    [ENV.awsEndpointDynamodb]: dynamo.endpoint,
    [ENV.awsEndpointSqs]: NOWHERE,
  };
  const observability = { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} };
  const handler = createSlackHandler(env, { observability, overrides: { clock } });
  /** `/visibility help` signed with `secret` at the clock's time: the status it gets. */
  const help = async (secret: string): Promise<number | undefined> => {
    const form = new URLSearchParams({
      command: '/visibility',
      text: 'help',
      channel_id: 'C100',
      user_id: 'U1',
      user_name: 'ana',
      response_url: 'https://hooks.slack.com/commands/T1/1/x',
      team_id: 'T0TEAM1',
      api_app_id: 'A0BRIDGE',
    }).toString();
    const event = httpApiEvent({
      rawPath: HTTP_PATHS.slackCommands,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...signSlackRequest(secret, clock.ms / 1000, form) },
      body: form,
    });
    return (await handler(event)).statusCode;
  };
  return { observer, clock, help };
}

function put(secretId: string, value: string): Promise<unknown> {
  return client.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: value }));
}

function reads(secretId: string): number {
  return server.calls().filter((call) => call.operation === 'GetSecretValue' && call.secretId === secretId).length;
}

describe('the Slack signing secret in Secrets Manager', () => {
  it('accepts the plain value the stack output puts (the stack creates the secret holding the placeholder)', async () => {
    const arn = server.createSecret(secretName, SECRET_PLACEHOLDER);
    const { help, observer } = slackFunction(arn);
    // Before the operator step: refused, and counted so the alarm fires.
    expect(await help(SLACK_SECRET)).toBe(503);
    expect(observer.countOf(SLACK_APP_METRICS.slackSigningSecretUnreadable)).toBe(1);

    const other = slackFunction(arn);
    await put(arn, `${SLACK_SECRET}\n`); // as pasted, with the newline a shell or editor adds
    expect(await other.help(SLACK_SECRET)).toBe(200);
    expect(await other.help('not-the-secret')).toBe(401);
    expect(other.observer.countOf(SLACK_APP_METRICS.slackSigningSecretInvalid)).toBe(0);
  });

  it('takes a JSON array while the secret is regenerated, then the new plain value', async () => {
    const arn = server.createSecret(secretName, SLACK_SECRET);
    const { help } = slackFunction(arn);
    expect(await help(SLACK_SECRET)).toBe(200);
    await put(arn, JSON.stringify([NEW_SLACK_SECRET, SLACK_SECRET]));
    expect(await help(NEW_SLACK_SECRET)).toBe(200);
    expect(await help(SLACK_SECRET)).toBe(200);
    await put(arn, NEW_SLACK_SECRET);
    expect(await help(SLACK_SECRET)).toBe(401);
    expect(await help(NEW_SLACK_SECRET)).toBe(200);
  });

  it('keeps the last good secret in a warm container when a bad value is put, logging the fix without the value', async () => {
    const arn = server.createSecret(secretName, SLACK_SECRET);
    const { help, observer } = slackFunction(arn);
    expect(await help(SLACK_SECRET)).toBe(200);
    await put(arn, `${NEW_SLACK_SECRET}\n${SLACK_SECRET}`); // "one per line" is not a format
    expect(await help(SLACK_SECRET)).toBe(200);
    expect(await help(SLACK_SECRET)).toBe(200);
    expect(observer.countOf(SLACK_APP_METRICS.slackSigningSecretInvalid)).toBe(2);
    const logged = observer.entries.filter((e) => e.level === 'error');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.fields['fix']).toMatch(/as Slack shows it/);
    expect(JSON.stringify(observer.entries)).not.toContain(NEW_SLACK_SECRET);
  });

  it('in an outage, reads the secret once per backoff instead of on every request, then recovers', async () => {
    // A secret that does not exist yet: every read fails, as in a Secrets Manager brown-out.
    const { help, clock, observer } = slackFunction(secretName);
    for (let request = 0; request < 5; request++) expect(await help(SLACK_SECRET)).toBe(503);
    expect(reads(secretName)).toBe(1);
    expect(observer.countOf(SLACK_APP_METRICS.slackSigningSecretUnreadable)).toBe(1);

    server.createSecret(secretName, SLACK_SECRET);
    expect(await help(SLACK_SECRET)).toBe(503); // still within the backoff: not read
    expect(reads(secretName)).toBe(1);
    clock.ms += FIRST_BACKOFF_MS;
    expect(await help(SLACK_SECRET)).toBe(200);
    expect(reads(secretName)).toBe(2);
  });

  it('in a brown-out (reads that neither answer nor fail), gives a read up at the Slack bound: the cached secret answers, or a 503', async () => {
    const arn = server.createSecret(secretName, SLACK_SECRET);
    const { help, clock, observer } = slackFunction(arn);
    expect(await help(SLACK_SECRET)).toBe(200);
    const release = server.stall();
    try {
      // The held read is given up on after SLACK_SECRET_READ_TIMEOUT_MS (the SDK's own timeouts would take 2 × 1.5 s).
      clock.ms += 1000;
      expect(await help(SLACK_SECRET)).toBe(200);
      const cold = slackFunction(arn);
      expect(await cold.help(SLACK_SECRET)).toBe(503);
      for (const observed of [observer, cold.observer]) {
        const given = observed.entries.filter((e) => e.message.startsWith('Slack signing secret could not be read; trying again'));
        expect(given.map((e) => e.fields['errorName'])).toEqual(['SecretReadTimedOut']);
        expect(String(given[0]?.fields['errorMessage'])).toContain(`within ${SLACK_SECRET_READ_TIMEOUT_MS} ms`);
      }
    } finally {
      release();
    }
  });
});

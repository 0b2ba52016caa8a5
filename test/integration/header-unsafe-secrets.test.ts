/**
 * Secrets sent in an HTTP header (the read-API key as `Authorization: Bearer`, the Slack bot token)
 * that hold a character a header cannot carry (issue 19): they fail once, when read, as
 * "fix the secret <name>" — an operator fix, not "read API unreachable" retried as transient — and
 * the value is in no error and no log line. Against the simulator and the local Slack server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SQSRecord } from 'aws-lambda';
import { ReadApiClient, isReadApiError } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { createDigestRuntime, readDigestConfig } from '../../functions/digest/runtime';
import { ENV } from '../../shared/contracts';
import { NeedsOperatorFix } from '../../shared/errors';
import { classifyFailure } from '../../shared/digest/failures';
import type { WebhookEvent } from '../../shared/events';
import { deliveryBody } from '../support/deliveries';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { RecordingObserver } from '../support/recording-observer';
import { enqueue, receiveRecords } from '../support/sqs-records';

const TOKEN = 'xoxb-header-test-token-1234';
/** Parts of the bad values: none may show up in an error or a log line. */
const KEY_TAIL = 'zq81vv4477tail';
const TOKEN_TAIL = 'pp09ww3311tail';

/** A line break inside (a second line pasted with it), and a non-Latin-1 character (a curly quote pasted with it). */
const unsafe = (value: string, tail: string) => [`${value}\n${tail}`, `${value}\u2019${tail}`];

let peers: DigestPeers;

beforeAll(async () => {
  peers = await startDigestPeers({
    tableName: 'header-unsafe-secrets',
    queueName: 'header-unsafe',
    visibilityTimeoutSeconds: 30,
    slackToken: TOKEN,
  });
  process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';
});

afterAll(async () => {
  await peers.close();
});

beforeEach(async () => {
  await peers.reset();
  peers.sim.clearRequests();
});

async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('a read-API key that cannot go in a header', () => {
  it.each(unsafe('read-key', KEY_TAIL))('fails as "fix the secret", before any request, without the key: %j', async (key) => {
    const error = await thrown(() =>
      new ReadApiClient({ baseUrl: peers.sim.url, apiKey: key, apiKeySecretName: 'arn:read-key' }).listProjects(),
    );
    expect(error).toBeInstanceOf(NeedsOperatorFix);
    expect((error as Error).message).toContain('fix the secret arn:read-key');
    expect(classifyFailure(error).needsFix).toBe(true);
    expect(JSON.stringify([(error as Error).message, (error as NeedsOperatorFix).fix])).not.toContain(KEY_TAIL);
    expect(peers.sim.requests()).toEqual([]);
  });

  it("redacts the key from fetch's own errors, text and cause, should one ever quote the request's headers", async () => {
    const key = `read-key-${KEY_TAIL}`;
    const quoting: typeof fetch = () => Promise.reject(new TypeError(`Headers.append: "Bearer ${key}" is an invalid header value.`));
    const error = await thrown(() => new ReadApiClient({ baseUrl: peers.sim.url, apiKey: key, fetch: quoting }).listProjects());
    expect((error as Error).message).toContain('Bearer [redacted]');
    expect((error as Error).message).not.toContain(KEY_TAIL);
    expect((error as Error).cause).toBeUndefined();
  });

  it('a key with a Latin-1 character still goes out (fetch sends it; the service judges it)', async () => {
    const error = await thrown(() => new ReadApiClient({ baseUrl: peers.sim.url, apiKey: 'cl\u00e9-wrong' }).listProjects());
    expect(isReadApiError(error) && error.status).toBe(401);
    expect(peers.sim.requests()).toHaveLength(1);
  });
});

describe('a Slack bot token that cannot go in a header', () => {
  it.each(unsafe('xoxb-token', TOKEN_TAIL))('fails as "fix the secret" before calling Slack, without the token: %j', async (token) => {
    const error = await thrown(() => createSlackPoster({ token, slackApiUrl: peers.slack.apiUrl, tokenSecretName: 'arn:bot-token' }));
    expect(error).toBeInstanceOf(NeedsOperatorFix);
    expect((error as Error).message).toContain('fix the secret arn:bot-token');
    expect((error as Error).message).not.toContain(TOKEN_TAIL);
    expect(peers.slack.calls()).toEqual([]);
  });
});

describe('the digest function with such a secret', () => {
  function runtime(values: { readApiKey: string; slackToken: string }) {
    const observer = new RecordingObserver();
    const config = readDigestConfig({
      [ENV.tableName]: peers.tableName,
      [ENV.queueUrl]: peers.queueUrl,
      [ENV.dlqUrl]: peers.dlqUrl,
      [ENV.readApiBaseUrl]: peers.sim.url,
      [ENV.readApiKey]: values.readApiKey,
      [ENV.slackBotToken]: values.slackToken,
      [ENV.slackApiUrl]: peers.slack.apiUrl,
      [ENV.slackDefaultChannel]: 'C0DIGEST',
      // No pacing between the digest's posts: this test is about secrets, not Slack's pace.
      [ENV.slackPaceIntervalMs]: '0',
      [ENV.awsRegion]: 'us-east-1',
      [ENV.awsEndpointDynamodb]: peers.dynamo.endpoint,
      // The local SQS server's queue URLs are on its own origin.
      [ENV.awsEndpointSqs]: new URL(peers.queueUrl).origin,
    });
    return { observer, digest: createDigestRuntime(config, { log: observer, metrics: observer }) };
  }

  async function queuedRun(): Promise<SQSRecord[]> {
    const event = JSON.parse(
      deliveryBody({ data: { project_id: peers.sim.projectIds()[0], run_id: 'r-1', status: 'completed' } }).body,
    ) as WebhookEvent;
    await enqueue(peers.sqs, peers.queueUrl, event);
    return receiveRecords(peers.sqs, peers.queueUrl);
  }

  it('posts the digest with good secrets (the set-up works)', async () => {
    const { digest } = runtime({ readApiKey: peers.sim.apiKey, slackToken: TOKEN });
    const records = await queuedRun();
    expect(await digest.handle(records, 60_000)).toEqual({ batchItemFailures: [] });
    expect(peers.slack.calls('chat.postMessage').length).toBeGreaterThan(0);
  });

  it.each([
    ['read-API key', ENV.readApiKey, { readApiKey: `read-key\n${KEY_TAIL}`, slackToken: TOKEN }],
    ['bot token', ENV.slackBotToken, { readApiKey: 'ignored-key', slackToken: `xoxb-a\u201c${TOKEN_TAIL}` }],
  ])('gives the batch back with one log line saying "fix the secret" for a bad %s, calling neither peer', async (_label, name, values) => {
    const { digest, observer } = runtime(values);
    const records = await queuedRun();
    const response = await digest.handle(records, 60_000);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(records.map((r) => r.messageId));
    const errors = observer.entries.filter((e) => e.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(`fix the secret ${name}`);
    expect(errors[0]!.fields['errorName']).toBe('NeedsOperatorFix');
    expect(JSON.stringify(observer.entries)).not.toMatch(new RegExp(`${KEY_TAIL}|${TOKEN_TAIL}|Bearer|unreachable`));
    expect(peers.sim.requests()).toEqual([]);
    expect(peers.slack.calls()).toEqual([]);
  });
});

/**
 * The digest worker's protocol peers for integration tests: dynalite with the bridge table, the
 * local SQS server with one queue, the service simulator and the local Slack server.
 */
import { CreateQueueCommand, PurgeQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startLocalDynamo, ensureBridgeTable, type LocalDynamo } from '../../local/dynamo';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { VisibilitySimulator } from '../../local/simulator/server';
import { LocalSlackServer } from '../../local/slack/server';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { ENV } from '../../shared/contracts';
import type { TestWiring } from './worker-wiring';

export interface DigestPeers {
  dynamo: LocalDynamo;
  tableName: string;
  sqs: SQSClient;
  queueUrl: string;
  /** The queue's DLQ (where unusable messages are quarantined). */
  dlqUrl: string;
  sim: VisibilitySimulator;
  slack: LocalSlackServer;
  /** Clears recorded Slack calls, every injected fault, and the queue. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function startDigestPeers(options: {
  tableName: string;
  queueName: string;
  visibilityTimeoutSeconds: number;
  slackToken: string;
}): Promise<DigestPeers> {
  const dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, options.tableName);
  const sqsServer = await SqsServer.start();
  const sqs = createSqsClient(sqsServer.url);
  const created = await sqs.send(
    new CreateQueueCommand({ QueueName: options.queueName, Attributes: { VisibilityTimeout: String(options.visibilityTimeoutSeconds) } }),
  );
  const queueUrl = created.QueueUrl ?? '';
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${options.queueName}-dlq` }));
  const dlqUrl = dlq.QueueUrl ?? '';
  const sim = await VisibilitySimulator.start();
  const slack = await LocalSlackServer.start({ tokens: [options.slackToken] });
  return {
    dynamo,
    tableName: options.tableName,
    sqs,
    queueUrl,
    dlqUrl,
    sim,
    slack,
    async reset() {
      slack.reset();
      slack.clearFaults();
      sim.clearFaults();
      await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
      await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
    },
    async close() {
      sqs.destroy();
      await Promise.all([sqsServer.close(), dynamo.close(), sim.close(), slack.close()]);
    },
  };
}

/**
 * The digest's deps on these peers: the read API on the simulator and the poster on the local Slack
 * server (neither waits between attempts), a digest store on the table, the queue's DLQ.
 */
export function peerDigestDeps(
  peers: DigestPeers,
  options: { slackToken: string; maxAttempts: number },
): Pick<TestWiring, 'readApi' | 'slack' | 'store' | 'deadLetters'> {
  const noWait = (): Promise<void> => Promise.resolve();
  return {
    readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey, sleep: noWait }),
    slack: createSlackPoster({
      token: options.slackToken,
      slackApiUrl: peers.slack.apiUrl,
      sleep: noWait,
      maxAttempts: options.maxAttempts,
    }),
    store: new DynamoDigestStore(peers.dynamo.client, { tableName: peers.tableName, leaseMs: 600_000, retentionSeconds: 86400 }),
    deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
  };
}

/** A test's own clock for the digest: its waits move the clock (`advance`) instead of waiting. */
export function steppedTime(now: () => number, advance: (ms: number) => void): Required<Pick<TestWiring, 'clock' | 'sleep'>> {
  return {
    clock: { now },
    sleep: (ms) => {
      advance(ms);
      return Promise.resolve();
    },
  };
}

/**
 * The functions' environment on these peers, as the stack sets it: the table, the queue and its DLQ, the
 * simulator's read API and the local Slack server (secrets read fresh, never cached between tests).
 */
export function digestPeersEnv(peers: DigestPeers, options: { slackToken: string; defaultChannel: string }): Record<string, string> {
  return {
    [ENV.tableName]: peers.tableName,
    [ENV.queueUrl]: peers.queueUrl,
    [ENV.dlqUrl]: peers.dlqUrl,
    [ENV.secretsCacheSeconds]: '0',
    [ENV.readApiBaseUrl]: peers.sim.url,
    [ENV.readApiKey]: peers.sim.apiKey,
    [ENV.slackBotToken]: options.slackToken,
    [ENV.slackApiUrl]: peers.slack.apiUrl,
    [ENV.slackDefaultChannel]: options.defaultChannel,
    // The local Slack server has no rate limit: paced lightly, as the stack paces it (local/stack/env.ts).
    [ENV.slackPaceIntervalMs]: '20',
    [ENV.awsRegion]: 'us-east-1',
    [ENV.awsEndpointDynamodb]: peers.dynamo.endpoint,
    [ENV.awsEndpointSqs]: peers.queueUrl.slice(0, peers.queueUrl.indexOf('/', 'http://'.length)),
  };
}

/**
 * Points Powertools' SecretsProvider at a local Secrets Manager: it builds its own client, taking the
 * endpoint, region and credentials from the process. Returns what puts the process back as it was.
 */
export function useLocalSecretsManager(url: string): () => void {
  const processEnv: Record<string, string> = {
    [ENV.awsEndpointSecretsManager]: url,
    [ENV.awsRegion]: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
  const saved: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(processEnv)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/**
 * The digest worker's protocol peers for integration tests: dynalite with the bridge table, the
 * local SQS server with one queue, the service simulator and the local Slack server.
 */
import { CreateQueueCommand, PurgeQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startLocalDynamo, ensureBridgeTable, type LocalDynamo } from '../../local/dynamo';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { VisibilitySimulator } from '../../local/simulator/server';
import { LocalSlackServer } from '../../local/slack-server';

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

/** The local stack's queues (from the topology), their depths, and the wait until the bridge is idle. */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sleep } from '../../shared/util';
import { SqsServer, createSqsClient } from '../sqs-server';
import type { DeadLettered } from '../sqs/engine';
import type { VisibilitySimulator } from '../simulator/server';
import type { HttpGateway } from '../http-gateway';
import type { LambdaPoller } from '../lambda-poller';
import { LOCAL_TOPOLOGY, type QueueSpec } from '../topology';
import { LocalStackError, type Cleanup, type LocalStack, type QueueDepth, type QueueDepths } from './types';

/** The stack's handle on its queues, plus the server and the event sources' own client. */
export type StartedSqs = LocalStack['sqs'] & { server: SqsServer; pollerClient: SQSClient };

export async function startSqs(
  host: string,
  region: string,
  maxReceiveCount: number,
  visibilityTimeoutSeconds: number,
  cleanup: Cleanup,
  onDeadLetter: (moved: DeadLettered) => void,
  fairQueues = true,
): Promise<StartedSqs> {
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 1 || maxReceiveCount > 1000) {
    throw new LocalStackError(`maxReceiveCount must be a whole number from 1 to 1000, got ${maxReceiveCount}`);
  }
  if (!Number.isInteger(visibilityTimeoutSeconds) || visibilityTimeoutSeconds < 0 || visibilityTimeoutSeconds > 43_200) {
    throw new LocalStackError(`the visibility timeout must be whole seconds from 0 to 43200, got ${visibilityTimeoutSeconds}`);
  }
  const server = await SqsServer.start({ host, region, onDeadLetter, fairQueues });
  cleanup.push(() => server.close());
  const client = createSqsClient(server.url, region);
  const pollerClient = createSqsClient(server.url, region);
  cleanup.push(() => {
    client.destroy();
    pollerClient.destroy();
    return Promise.resolve();
  });
  const create = async (name: string, attributes: Record<string, string>): Promise<string> => {
    const url = (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl;
    if (url === undefined) throw new Error('the local SQS server returned no queue URL');
    return url;
  };
  const { queues } = LOCAL_TOPOLOGY;
  // The topology's settings; the visibility timeout and maxReceiveCount as the caller chose them.
  const attributesOf = (spec: QueueSpec): Record<string, string> => ({
    ...(spec.visibilityTimeoutSeconds !== undefined ? { VisibilityTimeout: String(visibilityTimeoutSeconds) } : {}),
    MessageRetentionPeriod: String(spec.retentionSeconds),
    ...(spec.deadLetter
      ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: server.queueArn(queues[spec.deadLetter.queue].name), maxReceiveCount }) }
      : {}),
  });
  // Dead-letter queues first: the queues' redrive policies name them.
  const dlqUrl = await create(queues.digestDlq.name, attributesOf(queues.digestDlq));
  const queueAttributes = attributesOf(queues.digest);
  const queueUrl = await create(queues.digest.name, queueAttributes);
  const commandsDlqUrl = await create(queues.commandsDlq.name, attributesOf(queues.commandsDlq));
  const commandsQueueUrl = await create(queues.commands.name, attributesOf(queues.commands));
  return {
    server,
    endpoint: server.url,
    region,
    client,
    pollerClient,
    queueUrl,
    queueArn: server.queueArn(queues.digest.name),
    dlqUrl,
    dlqArn: server.queueArn(queues.digestDlq.name),
    queueAttributes,
    commandsQueueUrl,
    commandsQueueArn: server.queueArn(queues.commands.name),
    commandsDlqUrl,
  };
}

export async function queueDepth(client: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const answer = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const read = (name: string): number => Number(answer.Attributes?.[name as keyof typeof answer.Attributes] ?? 0);
  return {
    visible: read('ApproximateNumberOfMessages'),
    inFlight: read('ApproximateNumberOfMessagesNotVisible'),
    delayed: read('ApproximateNumberOfMessagesDelayed'),
  };
}

export async function waitForIdle(
  parts: {
    /** The stack's simulator and each connection's. */
    simulators: readonly VisibilitySimulator[];
    gateway: HttpGateway;
    pollers: readonly LambdaPoller[];
    depths: readonly (() => Promise<QueueDepths>)[];
  },
  options: { timeoutMs?: number; webhooks?: boolean },
): Promise<void> {
  // Generous: a message a failed attempt gave back stays hidden for its visibility timeout, and a
  // loaded machine runs each attempt slowly.
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let quietChecks = 0;
  for (;;) {
    const remaining = deadline - Date.now();
    if (options.webhooks !== false && parts.simulators.length > 0 && remaining > 0) {
      await Promise.race([Promise.all(parts.simulators.map((simulator) => simulator.webhooks.idle())), sleep(remaining)]);
    }
    const invocations = parts.pollers.reduce((n, poller) => n + poller.inFlight, 0);
    const busy = parts.gateway.inFlight + invocations;
    const queues = (await Promise.all(parts.depths.map((depths) => depths()))).map((depths) => depths.queue);
    const sum = (field: keyof QueueDepth): number => queues.reduce((n, queue) => n + queue[field], 0);
    const queued = sum('visible') + sum('inFlight') + sum('delayed');
    const state = `${parts.gateway.inFlight} ingest and ${invocations} digest invocation(s) running, ${sum('visible')} visible / ${sum('inFlight')} in flight / ${sum('delayed')} delayed on the queues`;
    if (busy === 0 && queued === 0) {
      quietChecks += 1;
      if (quietChecks >= 2) return;
    } else {
      quietChecks = 0;
    }
    // Quiet once at the deadline: one more look decides, rather than calling a settling stack busy.
    if (Date.now() >= deadline && quietChecks === 0) throw new Error(`the local stack is not idle after ${timeoutMs} ms: ${state}`);
    await sleep(quietChecks > 0 ? 20 : 25);
  }
}

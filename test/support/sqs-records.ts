/** Receives messages from a (local) SQS queue and shapes them as the Lambda SQS event source does. */
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { QueuedEvent, WebhookEvent } from '../../shared/events';
import { messageAttributesFor } from '../../shared/adapters/sqs-event-queue';
import { SqsMessageVisibility } from '../../shared/adapters/sqs-message-visibility';
import type { Log, Metrics } from '../../shared/ports';
import { handleTestBatch, type TestQueue, type TestWiring } from './worker-wiring';

export async function enqueue(sqs: SQSClient, queueUrl: string, event: WebhookEvent | string): Promise<void> {
  if (typeof event === 'string') {
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: event }));
    return;
  }
  const message: QueuedEvent = { event, received_at: new Date().toISOString() };
  await sqs.send(
    new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), MessageAttributes: messageAttributesFor(message) }),
  );
}

/** One receive; `waitSeconds` > 0 long-polls, so it answers as soon as a message is (or becomes) visible. */
export async function receiveRecords(sqs: SQSClient, queueUrl: string, max = 10, waitSeconds = 0): Promise<SQSRecord[]> {
  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: waitSeconds,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return (received.Messages ?? []).map((m) => ({
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: m.Attributes?.SentTimestamp ?? '0',
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '0',
      ...(m.Attributes?.MessageGroupId === undefined ? {} : { MessageGroupId: m.Attributes.MessageGroupId }),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(m.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { stringValue: value.StringValue, dataType: value.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:local',
    awsRegion: 'us-east-1',
  }));
}

/**
 * One invocation of the digest handler over what is visible on the queue, as the event source
 * mapping makes it: successes are deleted, failures stay for their visibility timeout. `as`: the
 * queue whose kinds the function takes these records for (the digest queue unless said);
 * `waitSeconds`: how long the receive long-polls for a message (default 0: what is visible now).
 */
export async function invokeDigestBatch(
  sqs: SQSClient,
  queueUrl: string,
  deps: () => TestWiring,
  observer: Log & Metrics,
  as: TestQueue = 'digest',
  waitSeconds = 0,
): Promise<{ records: SQSRecord[]; failed: Set<string> }> {
  const records = await receiveRecords(sqs, queueUrl, 10, waitSeconds);
  const response = await handleTestBatch(records, deps, new SqsMessageVisibility(sqs, queueUrl), observer, as);
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  for (const record of records) {
    if (!failed.has(record.messageId))
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: record.receiptHandle }));
  }
  return { records, failed };
}

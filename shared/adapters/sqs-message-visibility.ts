/**
 * MessageVisibility on SQS: a failed record's retry delay (ChangeMessageVisibility), and a paced
 * record sent again with its wait as DelaySeconds and its tenant's MessageGroupId (shared/worker/sqs.ts).
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import type { MessageVisibility, RequeuedMessage } from '../ports';

export class SqsMessageVisibility implements MessageVisibility {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async delay(receiptHandle: string, seconds: number): Promise<void> {
    await this.client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }),
    );
  }

  async requeue(message: RequeuedMessage, delaySeconds: number): Promise<void> {
    const attributes: Record<string, MessageAttributeValue> = {};
    for (const [name, value] of Object.entries(message.attributes)) attributes[name] = { DataType: 'String', StringValue: value };
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: message.body,
        DelaySeconds: delaySeconds,
        ...(Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
        ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
      }),
    );
  }
}

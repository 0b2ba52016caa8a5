/** EventQueue on SQS: the verified event plus receive time, with attributes for routing and DLQ selection. */
import { SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import {
  MESSAGE_ATTRIBUTE_EVENT_ID,
  MESSAGE_ATTRIBUTE_PROJECT,
  MESSAGE_ATTRIBUTE_TYPE,
  projectIdOf,
  type QueuedEvent,
} from '../events';
import type { EventQueue } from '../ports';

export function messageAttributesFor(message: QueuedEvent): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [MESSAGE_ATTRIBUTE_TYPE]: { DataType: 'String', StringValue: message.event.type },
    [MESSAGE_ATTRIBUTE_EVENT_ID]: { DataType: 'String', StringValue: message.event.id },
  };
  const projectId = projectIdOf(message.event);
  if (projectId) attributes[MESSAGE_ATTRIBUTE_PROJECT] = { DataType: 'String', StringValue: projectId };
  return attributes;
}

export class SqsEventQueue implements EventQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: QueuedEvent): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        MessageAttributes: messageAttributesFor(message),
      }),
    );
  }
}

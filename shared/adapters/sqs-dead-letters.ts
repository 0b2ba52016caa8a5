import { SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetters } from '../ports';

/** SQS allows at most 10 message attributes; values are kept short (they are for a person to read). */
const MAX_ATTRIBUTES = 10;
const MAX_ATTRIBUTE_CHARS = 500;

/** Sends a message that can't be processed to the DLQ, body unchanged, its reason as an attribute. */
export class SqsDeadLetters implements DeadLetters {
  constructor(
    private readonly client: SQSClient,
    private readonly dlqUrl: string,
  ) {}

  async quarantine(body: string, reason: string, attributes: Readonly<Record<string, string>>): Promise<void> {
    await this.client.send(
      new SendMessageCommand({ QueueUrl: this.dlqUrl, MessageBody: body, MessageAttributes: attributesOf({ ...attributes, reason }) }),
    );
  }
}

function attributesOf(values: Readonly<Record<string, string>>): Record<string, MessageAttributeValue> {
  const entries = Object.entries(values)
    .filter(([, value]) => value !== '')
    .slice(0, MAX_ATTRIBUTES);
  return Object.fromEntries(
    entries.map(([name, value]) => [name, { DataType: 'String', StringValue: value.slice(0, MAX_ATTRIBUTE_CHARS) }]),
  );
}

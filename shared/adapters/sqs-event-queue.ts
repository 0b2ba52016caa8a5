/**
 * EventQueue on SQS: the verified event plus receive time, with attributes for routing and DLQ selection,
 * and its tenant as MessageGroupId: on a standard queue that makes it a fair queue, where one tenant's
 * backlog does not hold back another's messages (docs/PERFORMANCE.md, "Fair to every tenant").
 */
import { SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import {
  MESSAGE_ATTRIBUTE_EVENT_ID,
  MESSAGE_ATTRIBUTE_PROJECT,
  MESSAGE_ATTRIBUTE_TENANT,
  MESSAGE_ATTRIBUTE_TYPE,
  projectIdOf,
  type QueuedEvent,
} from '../events';
import type { EventQueue } from '../ports';
import { QUARANTINE_ATTRIBUTES, type QuarantinedDelivery } from '../quarantine';
import { tenantLabel, tenantOf } from '../tenancy';

/** The MessageGroupId of a tenant's work: `stack` for the stack's own webhook, else the connection id. */
function messageGroupOf(connection: string | undefined): string {
  return tenantLabel(tenantOf(connection));
}

export function messageAttributesFor(message: QueuedEvent): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [MESSAGE_ATTRIBUTE_TYPE]: { DataType: 'String', StringValue: message.event.type },
    [MESSAGE_ATTRIBUTE_EVENT_ID]: { DataType: 'String', StringValue: message.event.id },
    [MESSAGE_ATTRIBUTE_TENANT]: { DataType: 'String', StringValue: messageGroupOf(message.connection) },
  };
  const projectId = projectIdOf(message.event);
  if (projectId) attributes[MESSAGE_ATTRIBUTE_PROJECT] = { DataType: 'String', StringValue: projectId };
  return attributes;
}

export class SqsEventQueue implements EventQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    /** Where quarantined deliveries go: the DLQ that `bridge dlq replay` moves back to queueUrl. */
    private readonly dlqUrl: string,
  ) {}

  async send(message: QueuedEvent): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        MessageAttributes: messageAttributesFor(message),
        MessageGroupId: messageGroupOf(message.connection),
      }),
    );
  }

  async quarantine(delivery: QuarantinedDelivery): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.dlqUrl,
        MessageBody: JSON.stringify(delivery),
        MessageAttributes: quarantineAttributesFor(delivery),
        MessageGroupId: messageGroupOf(delivery.connection),
      }),
    );
  }
}

export function quarantineAttributesFor(delivery: QuarantinedDelivery): Record<string, MessageAttributeValue> {
  const attribute = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });
  return {
    [QUARANTINE_ATTRIBUTES.kind]: attribute(delivery.kind),
    [QUARANTINE_ATTRIBUTES.reason]: attribute(delivery.reason),
    [QUARANTINE_ATTRIBUTES.quarantinedAt]: attribute(delivery.received_at),
    ...(delivery.event_id === undefined ? {} : { [QUARANTINE_ATTRIBUTES.eventId]: attribute(delivery.event_id) }),
  };
}

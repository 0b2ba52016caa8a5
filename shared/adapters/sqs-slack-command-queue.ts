/** DeferredCommandQueue on SQS: the commands' own queue (commands and App Home publishes), with the `type` attribute the DLQ tools read. */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { MESSAGE_ATTRIBUTE_TYPE } from '../events';
import type { DeferredCommandQueue, DeferredSlackCommand } from '../slack-app/ports';
import type { HomeRequest } from '../slack-app/home/ports';

export class SqsDeferredCommandQueue implements DeferredCommandQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: DeferredSlackCommand | HomeRequest): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        MessageAttributes: { [MESSAGE_ATTRIBUTE_TYPE]: { DataType: 'String', StringValue: message.kind } },
      }),
    );
  }
}

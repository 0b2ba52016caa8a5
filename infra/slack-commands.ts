/**
 * Deferred slash commands (subscribe, status, projects) apart from digests: their own queue and DLQ,
 * read by the digest function through a second event source with batch size 1 and no batching
 * window, so an answer never waits behind a backlog of runs. Why the digest function answers them
 * rather than a function of their own: docs/SLACK-APP.md ("Slash commands apart from digests").
 */
import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV, STACK_OUTPUTS } from '../shared/contracts';
import { FIVE_MINUTES } from './metrics';
import type { AlarmSpec } from './alarms';
import type { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { DLQ_RETENTION_DAYS } from './digest-worker';

/**
 * Slack takes answers on a response_url for 30 minutes; a command still queued after an hour can
 * only be answered "expired", so it need not be kept longer.
 */
export const COMMANDS_QUEUE_RETENTION = Duration.hours(1);

export interface SlackCommandsProps {
  readonly config: BridgeConfig;
  /** Answers the commands (it holds the read-API key, the subscription store and the response_url origins). */
  readonly digestFunction: BridgeFunction;
}

export class SlackCommands extends Construct {
  readonly queue: Queue;
  readonly dlq: Queue;

  constructor(scope: Construct, id: string, props: SlackCommandsProps) {
    super(scope, id);
    const { config, digestFunction } = props;
    this.dlq = new Queue(this, 'Dlq', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(DLQ_RETENTION_DAYS),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: COMMANDS_QUEUE_RETENTION,
      // The least an event source accepts (the function's timeout): a failed answer is retried in
      // minutes, while its response_url still works, not after 6 × a digest batch's timeout.
      visibilityTimeout: digestFunction.fn.timeout ?? Duration.seconds(60),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: config.maxReceiveCount },
    });
    digestFunction.fn.addEventSource(
      new SqsEventSource(this.queue, {
        // One command per invocation, invoked as soon as it arrives; no concurrency cap: people type few commands.
        batchSize: 1,
        maxBatchingWindow: Duration.seconds(0),
        reportBatchItemFailures: true,
      }),
    );
    // A failed command's retry delay goes to the queue it came from (ChangeMessageVisibility, granted by the event source).
    digestFunction.fn.addEnvironment(ENV.commandsQueueUrl, this.queue.queueUrl);
  }

  /** The Slack function's one right on the queue. */
  grantSend(fn: BridgeFunction): void {
    fn.allow('EnqueueDeferredCommands', ['sqs:SendMessage'], [this.queue.queueArn]);
  }

  alarmSpecs(): AlarmSpec[] {
    return [
      {
        id: 'CommandsDlqNotEmpty',
        description:
          'A deferred slash command (subscribe, status, projects) failed maxReceiveCount times and rests in the commands DLQ: someone in Slack got no answer. The digest function log says why (read API or Slack failing, an expired response_url). Nothing to replay: the answer is useless after 30 minutes; purge the queue once the cause is fixed.',
        metric: this.dlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: 1,
      },
    ];
  }

  /** [output key, value, description] of the commands' stack outputs. */
  outputs(): [string, string, string][] {
    return [
      [STACK_OUTPUTS.commandsQueueUrl, this.queue.queueUrl, 'Queue of deferred slash commands (subscribe, status, projects)'],
      [STACK_OUTPUTS.commandsDlqUrl, this.dlq.queueUrl, 'Dead-letter queue of the slash commands queue'],
    ];
  }
}

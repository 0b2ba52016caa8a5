/**
 * The digest worker: queue + DLQ, the digest function and its SQS event source. Timeout, lease and
 * visibility timeout all come from the one time budget (digest-budget.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DIGEST_DEFAULTS, ENV, SERVICES, TABLE } from '../shared/contracts';
import { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { digestBudget, type DigestBudget } from './digest-budget';
import { Store } from './store';
import { allowConnectionSecrets } from './connection-secrets';

export const QUEUE_RETENTION_DAYS = 4;
export const DLQ_RETENTION_DAYS = 14;
export const SECRETS_CACHE_SECONDS = DIGEST_DEFAULTS.secretsCacheSeconds;

export interface DigestWorkerProps {
  readonly config: BridgeConfig;
  readonly table: Table;
  readonly readApiKey: ISecret;
  readonly slackToken: ISecret;
}

export class DigestWorker extends Construct {
  readonly queue: Queue;
  readonly dlq: Queue;
  readonly function: BridgeFunction;
  readonly budget: DigestBudget;

  constructor(scope: Construct, id: string, props: DigestWorkerProps) {
    super(scope, id);
    const { config } = props;
    this.budget = digestBudget(config.digestBatchSize, config.digestBatchWindowSeconds);
    this.dlq = new Queue(this, 'Dlq', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(DLQ_RETENTION_DAYS),
    });
    // Quarantined deliveries and failed digests wait here for `bridge dlq replay`: never deleted with the stack.
    this.dlq.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(QUEUE_RETENTION_DAYS),
      visibilityTimeout: Duration.seconds(this.budget.visibilityTimeoutSeconds),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: config.maxReceiveCount },
    });
    this.function = this.createFunction(props);
    this.grant(props);
    this.function.fn.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: config.digestBatchSize,
        maxBatchingWindow: Duration.seconds(config.digestBatchWindowSeconds),
        reportBatchItemFailures: true,
        // Caps parallel digests so the read API's rate limit is not exhausted by a burst.
        maxConcurrency: config.digestMaxConcurrency,
      }),
    );
  }

  private createFunction(props: DigestWorkerProps): BridgeFunction {
    const { config } = props;
    return new BridgeFunction(this, 'Digest', {
      service: SERVICES.digest,
      config,
      description: 'Reads the visibility figures of queued events and posts Slack digests',
      timeoutSeconds: this.budget.timeoutSeconds,
      // Bundled with the chart code and its assets whatever chartsEnabled says: the setting is read at run time.
      charts: true,
      environment: {
        [ENV.tableName]: props.table.tableName,
        // Failed messages get their retry delay with ChangeMessageVisibility (granted by the event source).
        [ENV.queueUrl]: this.queue.queueUrl,
        [ENV.dlqUrl]: this.dlq.queueUrl,
        [ENV.readApiBaseUrl]: config.readApiBaseUrl,
        [ENV.readApiKeySecretArn]: props.readApiKey.secretArn,
        [ENV.slackBotTokenSecretArn]: props.slackToken.secretArn,
        [ENV.slackDefaultChannel]: config.slackDefaultChannel,
        [ENV.slackProjectChannels]: JSON.stringify(config.projectChannels),
        [ENV.visibilityRange]: config.visibilityRange,
        [ENV.gapsPageSize]: String(config.gapsPageSize),
        [ENV.digestMode]: config.digestMode,
        [ENV.chartsEnabled]: String(config.chartsEnabled),
        ...(Object.keys(config.noiseMinimums).length === 0 ? {} : { [ENV.noiseMinimums]: JSON.stringify(config.noiseMinimums) }),
        // The failure log says "moving to the DLQ" on the last receive instead of "will be retried".
        [ENV.maxReceiveCount]: String(config.maxReceiveCount),
        ...(config.dashboardUrlTemplate === undefined ? {} : { [ENV.dashboardUrlTemplate]: config.dashboardUrlTemplate }),
        [ENV.secretsCacheSeconds]: String(SECRETS_CACHE_SECONDS),
        [ENV.digestLeaseSeconds]: String(this.budget.leaseSeconds),
        [ENV.digestRecordBudgetSeconds]: String(this.budget.perRecordSeconds),
        // Only when it differs from the function's default ('history'): a single-workspace stack is unchanged.
        ...(config.slackPostRecovery === 'ledger' ? { [ENV.slackPostRecovery]: config.slackPostRecovery } : {}),
      },
    });
  }

  /** Its own key prefixes only; the event source grants the consume actions on the queue. */
  private grant(props: DigestWorkerProps): void {
    const fn = this.function;
    // Claims, progress, snapshots and the newest-run mark are all conditional updates.
    fn.allow(
      'DigestClaimsAndSnapshots',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      [props.table.tableArn],
      Store.leadingKeys(TABLE.prefixes.digest, TABLE.prefixes.snapshot),
    );
    // The posted ledger (exactly once without reading history): the ts of each post, read by a retry.
    if (props.config.slackPostRecovery === 'ledger')
      fn.allow(
        'PostedLedger',
        ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        [props.table.tableArn],
        Store.leadingKeys(TABLE.prefixes.posted),
      );
    fn.allow('QuarantineUnusableMessages', ['sqs:SendMessage'], [this.dlq.queueArn]);
    // A digest the channel's pace defers is sent again with its wait as the delay (shared/worker/sqs.ts), not handed back.
    fn.allow('RequeuePacedRecords', ['sqs:SendMessage'], [this.queue.queueArn]);
    fn.allow('ReadApiKeyAndSlackToken', ['secretsmanager:GetSecretValue'], [props.readApiKey.secretArn, props.slackToken.secretArn]);
    // Connections' events: the connection's item (its cadence noted for the watchdog) and its read key.
    fn.allow(
      'ConnectionsReadAndCadence',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'],
      [props.table.tableArn],
      Store.leadingKeys(TABLE.prefixes.connection),
    );
    allowConnectionSecrets(fn, props.config.stage);
  }
}

/**
 * The deployable bridge of one stage: webhook (HTTP API → ingest) → digest worker (SQS + DLQ →
 * digest → Slack), the Slack app (its function, and its commands' own queue + DLQ read by the
 * digest function), one table, the secrets, alarms and a dashboard. Each part is a construct
 * with one job; this class only wires them together and writes the outputs `bridge` reads.
 */
import { CfnOutput, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import { GraphWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { connectionSecretPrefix, HTTP_PATHS, STACK_OUTPUTS, stackNameFor } from '../shared/contracts';
import { HANDLED_EVENT_TYPES } from '../shared/events';
import { blockedRequestsMetric, WebhookFront, type ClientRateLimitStack } from './client-rate-limit';
import type { BridgeConfig } from './config';
import { ApiCustomDomain } from './custom-domain';
import { DigestWorker } from './digest-worker';
import { keepLogicalId, STABLE_LOGICAL_IDS as IDS } from './logical-ids';
import { Monitoring } from './monitoring';
import { SlackOAuth } from './slack-oauth';
import { SlackApp } from './slack-app';
import { BridgeSecrets, type BridgeSecret } from './secrets';
import { Store } from './store';
import { Webhook } from './webhook';
import { WeeklyReport } from './weekly-report';
import { QuietHours } from './quiet-hours';

export { stackNameFor };

export interface BridgeStackProps extends StackProps {
  readonly config: BridgeConfig;
  /** With clientRateLimitEnabled: the us-east-1 stack holding the web ACL the CloudFront front uses. */
  readonly clientRateLimit?: ClientRateLimitStack | undefined;
}

export class BridgeStack extends Stack {
  readonly config: BridgeConfig;
  readonly store: Store;
  readonly secrets: BridgeSecrets;
  readonly worker: DigestWorker;
  readonly webhook: Webhook;
  readonly slackApp: SlackApp;
  /** "Add to Slack", with the stage's `slackClientId` only. */
  readonly slackOAuth: SlackOAuth | undefined;
  readonly monitoring: Monitoring;
  readonly weeklyReport: WeeklyReport;
  readonly quietHours: QuietHours;
  /** CloudFront + WAF in front of the webhook and the Slack routes (clientRateLimitEnabled), else undefined. */
  readonly front: WebhookFront | undefined;
  /** The API's custom domain (customDomainName), else undefined. */
  readonly customDomain: ApiCustomDomain | undefined;

  constructor(scope: Construct, id: string, props: BridgeStackProps) {
    const { config, clientRateLimit, ...stackProps } = props;
    super(scope, id, {
      description: `Webhook-to-Slack bridge for the AI-visibility monitoring service (${config.stage})`,
      terminationProtection: !config.development,
      ...stackProps,
    });
    this.config = config;
    Tags.of(this).add('project', 'visibility-slack-bridge');
    Tags.of(this).add('stage', config.stage);
    this.store = new Store(this, 'Store', config);
    this.secrets = new BridgeSecrets(this, 'Secrets', config);
    const table = this.store.table;
    this.worker = new DigestWorker(this, 'DigestWorker', {
      config,
      table,
      readApiKey: this.secrets.readApiKey.secret,
      slackToken: this.secrets.slackToken.secret,
    });
    const { queue, dlq } = this.worker;
    this.webhook = new Webhook(this, 'Webhook', { config, table, queue, dlq, signingSecrets: this.secrets.signingSecrets.secret });
    const [api, ingestFunction, digestFunction] = [this.webhook.api, this.webhook.function.fn, this.worker.function.fn];
    this.slackApp = new SlackApp(this, 'SlackApp', {
      config,
      api,
      stage: this.webhook.stage,
      table,
      digestFunction: this.worker.function,
      slackToken: this.secrets.slackToken.secret,
      actionSigningKey: this.secrets.actionSigningKey,
    });
    this.weeklyReport = new WeeklyReport(this, 'WeeklyReport', {
      config,
      queue,
      table,
      digestFunction: this.worker.function,
      slackFunction: this.slackApp.function,
    });
    this.quietHours = new QuietHours(this, 'QuietHours', {
      config,
      queue,
      table,
      digestFunction: this.worker.function,
      slackFunction: this.slackApp.function,
    });
    const extraAlarms = [...this.slackApp.alarmSpecs(), ...this.weeklyReport.alarmSpecs(), ...this.quietHours.alarmSpecs()];
    this.monitoring = new Monitoring(this, 'Monitoring', { config, api, ingestFunction, digestFunction, queue, dlq, extraAlarms });
    this.customDomain =
      config.customDomain === undefined
        ? undefined
        : new ApiCustomDomain(this, 'CustomDomain', { config, domain: config.customDomain, api, stage: this.webhook.stage });
    this.front = clientRateLimit === undefined ? undefined : this.addFront(clientRateLimit);
    this.slackOAuth =
      config.slackClientId === undefined
        ? undefined
        : new SlackOAuth(this, 'SlackOAuth', { config, clientId: config.slackClientId, api, table, publicBaseUrl: this.publicBaseUrl });
    this.slackOAuth?.grantTokenRefresh(this.worker.function, table);
    this.pinStatefulIds();
    this.addOutputs();
  }

  /** The CloudFront front with the us-east-1 web ACL; its blocked requests go on the dashboard (the alarm lives in us-east-1). */
  private addFront(edge: ClientRateLimitStack): WebhookFront {
    const front = new WebhookFront(this, 'ClientRateLimit', {
      config: this.config,
      api: this.webhook.api,
      webAcl: edge.webAcl,
      // The execute-api host is disabled with a custom domain: CloudFront then reaches the API by the domain.
      originDomainName: this.config.customDomain?.name,
    });
    this.monitoring.dashboard.addWidgets(
      new GraphWidget({
        title: `Refused by the per-client rate limit (WAF, ${edge.region})`,
        left: [blockedRequestsMetric(edge.webAclName).with({ label: 'Blocked (403)' })],
        width: 24,
      }),
    );
    return front;
  }

  private pinStatefulIds(): void {
    keepLogicalId(this.store.table, IDS.table);
    keepLogicalId(this.worker.dlq, IDS.dlq);
    keepLogicalId(this.worker.queue, IDS.queue);
    for (const [secret, id] of [
      [this.secrets.readApiKey, IDS.readApiKey],
      [this.secrets.slackToken, IDS.slackToken],
      [this.secrets.signingSecrets, IDS.signingSecrets],
    ] as [BridgeSecret, string][]) {
      if (secret.created) keepLogicalId(secret.node.findChild('Secret'), id);
    }
    keepLogicalId(this.webhook.function.logGroup, IDS.ingestLogs);
    keepLogicalId(this.worker.function.logGroup, IDS.digestLogs);
    keepLogicalId(this.webhook.api, IDS.api);
    keepLogicalId(this.webhook.stage, IDS.stage);
    keepLogicalId(this.webhook.accessLogs, IDS.accessLogs);
  }

  /** Where the service and Slack reach the API, without a trailing slash: CloudFront, else the custom domain, else execute-api. */
  get publicBaseUrl(): string {
    return this.front?.baseUrl ?? this.customDomain?.baseUrl ?? this.webhook.api.apiEndpoint;
  }

  private addOutputs(): void {
    const { config, webhook, worker, secrets, monitoring } = this;
    const output = (key: string, value: string, description: string): void => {
      new CfnOutput(this, key, { value, description });
    };
    output(
      STACK_OUTPUTS.webhookUrl,
      this.front === undefined && this.customDomain === undefined ? webhook.publicUrl : `${this.publicBaseUrl}${HTTP_PATHS.webhook}`,
      `URL to register as the webhook endpoint (events ${HANDLED_EVENT_TYPES.join(' and ')})`,
    );
    output(STACK_OUTPUTS.queueUrl, worker.queue.queueUrl, 'Digest queue');
    output(STACK_OUTPUTS.dlqUrl, worker.dlq.queueUrl, 'Dead-letter queue of the digest queue');
    output(STACK_OUTPUTS.tableName, this.store.table.tableName, 'DynamoDB table (dedup records, digest claims, snapshots)');
    output(STACK_OUTPUTS.readApiKeySecretArn, secrets.readApiKey.secret.secretArn, 'Secret with the read-API key');
    output(STACK_OUTPUTS.slackTokenSecretArn, secrets.slackToken.secret.secretArn, 'Secret with the Slack bot token');
    output(
      STACK_OUTPUTS.signingSecretsSecretArn,
      secrets.signingSecrets.secret.secretArn,
      'Secret with the webhook signing secrets (JSON array)',
    );
    output(STACK_OUTPUTS.putReadApiKeyCommand, secrets.readApiKey.putValueCommand(), 'Puts the read-API key');
    output(STACK_OUTPUTS.putSlackTokenCommand, secrets.slackToken.putValueCommand(), 'Puts the Slack bot token');
    output(
      STACK_OUTPUTS.putSigningSecretsCommand,
      secrets.signingSecrets.putValueCommand(),
      'Puts the webhook signing secrets; list the old and the new secret while rotating',
    );
    output(
      STACK_OUTPUTS.connectionSecretPrefix,
      connectionSecretPrefix(config.stage),
      'Where connection secrets are named (`bridge connections add`); each connection has its webhook at <WebhookUrl>/<id>',
    );
    output(STACK_OUTPUTS.ingestFunctionName, webhook.function.fn.functionName, 'Ingest function');
    output(STACK_OUTPUTS.digestFunctionName, worker.function.fn.functionName, 'Digest function');
    output(STACK_OUTPUTS.alarmTopicArn, monitoring.topic.topicArn, 'SNS topic the alarms notify');
    output(STACK_OUTPUTS.dashboardName, monitoring.dashboard.dashboardName, 'CloudWatch dashboard');
    // Read by `bridge doctor` to check the key against the right API and the bot's channel membership.
    output(STACK_OUTPUTS.readApiBaseUrl, config.readApiBaseUrl, 'Read API base URL');
    output(STACK_OUTPUTS.slackDefaultChannel, config.slackDefaultChannel, 'Default Slack channel');
    output(STACK_OUTPUTS.slackProjectChannels, JSON.stringify(config.projectChannels), 'Project id → Slack channel (JSON)');
    output(
      STACK_OUTPUTS.actionSigningKeySecretArn,
      secrets.actionSigningKey.secretArn,
      'Generated key that signs the values on the buttons; rotate by putting ["<new>", "<old>"]',
    );
    if (this.customDomain !== undefined) {
      output(
        STACK_OUTPUTS.customDomainTarget,
        this.customDomain.dnsTarget,
        `Point ${config.customDomain?.name ?? 'the custom domain'} here (CNAME, or an alias record)`,
      );
    }
    for (const [key, value, description] of this.slackApp.outputs(this.publicBaseUrl)) output(key, value, description);
    for (const [key, value, description] of this.slackOAuth?.outputs() ?? []) output(key, value, description);
  }
}

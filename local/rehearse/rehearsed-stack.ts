/**
 * The synthesized stack, run as AWS would run it, on this machine: resources created from the
 * template on the local peers (dynalite, the local SQS server with its timers compressed, the
 * local Secrets Manager), each function's cdk.out bundle in its own execution environments with
 * the template's handler, environment, timeout and memory, the HTTP API's routes and the SQS event
 * source mappings wired from the template, and the outputs served by a local DescribeStacks so the
 * `bridge` CLI finds the stack by name.
 *
 * The public hosts the functions call are played by local peers: the stage file's read API by the
 * service simulator, slack.com and hooks.slack.com by the local Slack server, the API's
 * execute-api host by the local HTTP API (egress.cjs). Every AWS call goes through the call
 * recorder, for the IAM check; every line a function prints is kept, for the metrics check.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createSqsClient as createLocalSqsClient, SqsServer } from '../sqs-server';
import { startLocalDynamo, type LocalDynamo } from '../dynamo';
import { createSecretsManagerClient, LocalSecretsManagerServer } from '../secrets-manager-server';
import { LocalSlackServer } from '../slack/server';
import { LocalCloudFormationServer } from '../cloudformation-server';
import { VisibilitySimulator } from '../simulator/server';
import { HttpGateway, type GatewayRequestInfo, type GatewayRoute, type Throttle } from '../http-gateway';
import { ENV } from '../../shared/contracts';
import { LambdaPoller } from '../lambda-poller';
import type { APIGatewayProxyResultV2, SQSBatchResponse } from 'aws-lambda';
import { assetDirOf, resourcesOfType, type StackArtifact } from './assembly';
import { AwsCallRecorder } from './aws-call-recorder';
import { resolveIntrinsics, type ResolveContext } from './intrinsics';
import { RehearsedFunction, type FunctionLine } from './lambda-function';
import { createResources, type CreatedResources } from './resources';
import type { MetricId } from './alarm-coverage';

export const REHEARSAL_ACCOUNT_ID = '000000000000';
/** Queue time runs this much faster: the rest of the template's 1,985 s visibility timeout passes in about 1 s. */
const TIME_SCALE = 2000;
const EGRESS_PRELOAD = fileURLToPath(new URL('./egress.cjs', import.meta.url));

export interface RehearsedStackOptions {
  stack: StackArtifact;
  /** Where the functions' code copies go. */
  workDir: string;
  /** Every line a function prints. */
  onLine?: (line: FunctionLine) => void;
  /** The HTTP API's id (default a random one); stacks rehearsed side by side share it so their alarms resolve alike. */
  apiId?: string;
}

export interface PlatformMetric extends MetricId {
  at: number;
}

export interface AccessLogLine {
  logGroupArn: string;
  line: string;
}

/** The workspace, org and app the template's Slack function serves: the rehearsal's local Slack is that workspace. */
export interface SlackIdentity {
  teamId: string | undefined;
  enterpriseId: string | undefined;
  appId: string | undefined;
  /** The app's client id ("Add to Slack", the stage's `slackClientId`): the local Slack's OAuth client. */
  clientId: string | undefined;
}

interface Peers {
  dynamo: LocalDynamo;
  sqs: SqsServer;
  secrets: LocalSecretsManagerServer;
  slack: LocalSlackServer;
  simulator: VisibilitySimulator;
  cloudFormation: LocalCloudFormationServer;
  recorder: AwsCallRecorder;
}

export class RehearsedStack {
  readonly functions = new Map<string, RehearsedFunction>();
  readonly lines: FunctionLine[] = [];
  readonly platformMetrics: PlatformMetric[] = [];
  readonly accessLog: AccessLogLine[] = [];
  readonly pollers: LambdaPoller[] = [];
  outputs: Record<string, string> = {};
  gateway!: HttpGateway;
  private sampler: NodeJS.Timeout | undefined;
  /** A client of the local SQS server (the peer itself, not through the recorder). */
  readonly sqsClient: SQSClient;

  private constructor(
    readonly stack: StackArtifact,
    readonly region: string,
    readonly apiId: string,
    readonly peers: Peers,
    readonly resources: CreatedResources,
    private readonly options: RehearsedStackOptions,
    readonly slackIdentity: SlackIdentity,
    /** The network as the functions and the operator see it: public origin → local origin (egress.cjs). */
    readonly egress: Record<string, string>,
  ) {
    this.sqsClient = createLocalSqsClient(peers.sqs.url);
  }

  get context(): ResolveContext {
    return this.resources.context;
  }

  get stackName(): string {
    return this.stack.stackName;
  }

  static async start(options: RehearsedStackOptions): Promise<RehearsedStack> {
    const region = options.stack.region ?? 'us-east-1';
    const apiId = options.apiId ?? `rh${randomBytes(4).toString('hex')}`;
    const dynamo = await startLocalDynamo();
    const sqs = await SqsServer.start({ region, timeScale: TIME_SCALE });
    const secrets = await LocalSecretsManagerServer.start({ region });
    const recorder = await AwsCallRecorder.start({
      upstreams: { dynamodb: dynamo.endpoint, sqs: sqs.url, secretsmanager: secrets.url },
      region,
      accountId: REHEARSAL_ACCOUNT_ID,
    });
    // The stage's own workspace and app, as the template names them: commands and clicks come from there.
    const slackIdentity = slackIdentityOf(options.stack.template);
    const slack = await LocalSlackServer.start({
      responseUrlOrigin: 'https://hooks.slack.com',
      // As Slack's files.getUploadURLExternal answers: the deployed function sends chart bytes to Slack hosts only.
      fileUploadOrigin: 'https://files.slack.com',
      ...(slackIdentity.teamId !== undefined ? { teamId: slackIdentity.teamId } : {}),
      ...(slackIdentity.appId !== undefined ? { appId: slackIdentity.appId } : {}),
      ...(slackIdentity.clientId !== undefined ? { oauth: { clientId: slackIdentity.clientId } } : {}),
    });
    const egress: Record<string, string> = {};
    const simulator = await VisibilitySimulator.start({ webhooks: { fetch: egressFetch(egress), retryScale: 0.001 } });
    const cloudFormation = await LocalCloudFormationServer.start();
    const secretsClient = createSecretsManagerClient(secrets.url, region);
    const resources = await createResources(
      options.stack.template,
      {
        dynamodb: dynamo.client,
        sqs: createLocalSqsClient(sqs.url),
        secretsManager: secretsClient,
        queueUrl: (name) => sqs.queueUrl(name),
      },
      { stackName: options.stack.stackName, region, accountId: REHEARSAL_ACCOUNT_ID, apiId },
    );
    secretsClient.destroy();
    const peers = { dynamo, sqs, secrets, slack, simulator, cloudFormation, recorder };
    const stack = new RehearsedStack(options.stack, region, apiId, peers, resources, options, slackIdentity, egress);
    await stack.wire();
    return stack;
  }

  /** Environment for an operator's command (`npx bridge …`): the local peers as AWS, the rehearsal's network. */
  operatorEnvironment(): Record<string, string> {
    const { peers } = this;
    return {
      AWS_REGION: this.region,
      AWS_DEFAULT_REGION: this.region,
      AWS_ACCESS_KEY_ID: 'operator',
      AWS_SECRET_ACCESS_KEY: 'operator',
      AWS_ENDPOINT_URL_CLOUDFORMATION: peers.cloudFormation.url,
      AWS_ENDPOINT_URL_DYNAMODB: peers.dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: peers.sqs.url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: peers.secrets.url,
      REHEARSAL_EGRESS: JSON.stringify(this.egress),
      NODE_OPTIONS: `--require ${EGRESS_PRELOAD}`,
    };
  }

  /** The function of a template logical id, or of the function a route/output names. */
  fn(logicalId: string): RehearsedFunction {
    const fn = this.functions.get(logicalId);
    if (!fn) throw new Error(`no function ${logicalId} in the template`);
    return fn;
  }

  functionOfType(prefix: string): RehearsedFunction {
    const match = [...this.functions.keys()].find((id) => id.startsWith(prefix));
    if (!match) throw new Error(`no function whose logical id starts with ${prefix}`);
    return this.fn(match);
  }

  /** Resolves a template value against the local resources. */
  resolve(value: unknown): unknown {
    return resolveIntrinsics(value, this.context);
  }

  /** Waits until every queue is empty and no function runs (or the time passes). */
  async settle(timeoutMs = 30_000): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const busy = this.pollers.some((poller) => poller.inFlight > 0) || this.gateway.inFlight > 0;
      if (!busy && (await this.queuedMessages()) === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  /** Messages (visible + in flight) in the stack's queues with a redrive policy: the DLQs' are parked. */
  async queuedMessages(): Promise<number> {
    let total = 0;
    for (const queue of this.queues().filter((q) => q.hasRedrive)) {
      const counts = await this.queueCounts(queue.url);
      total += counts.visible + counts.inFlight;
    }
    return total;
  }

  queues(): { logicalId: string; url: string; name: string; hasRedrive: boolean }[] {
    return resourcesOfType(this.stack.template, 'AWS::SQS::Queue').map(([logicalId, resource]) => ({
      logicalId,
      url: this.context.resources[logicalId]!.ref,
      name: this.context.resources[logicalId]!.attributes['QueueName']!,
      hasRedrive: resource.Properties?.['RedrivePolicy'] !== undefined,
    }));
  }

  async queueCounts(url: string): Promise<{ visible: number; inFlight: number }> {
    const answer = await this.sqsClient.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      visible: Number(answer.Attributes?.['ApproximateNumberOfMessages'] ?? 0),
      inFlight: Number(answer.Attributes?.['ApproximateNumberOfMessagesNotVisible'] ?? 0),
    };
  }

  async close(): Promise<void> {
    if (this.sampler) clearInterval(this.sampler);
    await Promise.all(this.pollers.map((poller) => poller.close(2000)));
    for (const fn of this.functions.values()) fn.close();
    await this.gateway?.close(1000);
    this.sqsClient.destroy();
    const { recorder, simulator, slack, cloudFormation, secrets, sqs, dynamo } = this.peers;
    for (const peer of [recorder, simulator, slack, cloudFormation, secrets, sqs, dynamo]) await peer.close();
  }

  // -- wiring ---------------------------------------------------------------------------------

  private async wire(): Promise<void> {
    this.createFunctions();
    this.gateway = await HttpGateway.start({
      routes: this.routes(),
      createHandler: () => () => Promise.reject(new Error('no integration')),
      apiId: this.apiId,
      accountId: REHEARSAL_ACCOUNT_ID,
      onRequest: (info) => this.onRequest(info),
      throttle: throttleOf(this.stageSetting('DefaultRouteSettings')),
    });
    const [apiLogicalId] = resourcesOfType(this.stack.template, 'AWS::ApiGatewayV2::Api')[0] ?? [];
    if (!apiLogicalId) throw new Error('the template has no HTTP API (AWS::ApiGatewayV2::Api)');
    const slack = `http://${this.peers.slack.host}:${this.peers.slack.port}`;
    Object.assign(this.egress, {
      [this.resolve({ 'Fn::GetAtt': [apiLogicalId, 'ApiEndpoint'] }) as string]: this.gateway.url,
      'https://slack.com': slack,
      'https://hooks.slack.com': slack,
      'https://files.slack.com': slack,
      ...this.readApiOrigins(),
    });
    this.startEventSources();
    for (const [key, output] of Object.entries(this.stack.template.Outputs ?? {})) this.outputs[key] = String(this.resolve(output.Value));
    this.peers.cloudFormation.putStack({ name: this.stackName, outputs: this.outputs });
    this.sampler = setInterval(() => void this.sampleQueues(), 500);
  }

  /** One property of the API's stage, resolved (e.g. its DefaultRouteSettings throttle, as API Gateway applies it). */
  private stageSetting(key: string): unknown {
    const [, stage] = resourcesOfType(this.stack.template, 'AWS::ApiGatewayV2::Stage')[0] ?? [];
    return this.resolve(stage?.Properties?.[key]);
  }

  /** Every https origin in a function's environment that is not AWS or Slack: the stage file's read API. */
  private readApiOrigins(): Record<string, string> {
    const origins: Record<string, string> = {};
    for (const fn of this.functions.values()) {
      for (const value of Object.values(fn.spec.environment)) {
        if (!/^https:\/\//.test(value)) continue;
        const origin = new URL(value).origin;
        if (!/amazonaws\.com$|slack\.com$/.test(new URL(value).hostname)) origins[origin] = this.peers.simulator.url;
      }
    }
    return origins;
  }

  private createFunctions(): void {
    const awsEndpoints = {
      AWS_ENDPOINT_URL_DYNAMODB: this.peers.recorder.endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: this.peers.recorder.endpoints.sqs,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: this.peers.recorder.endpoints.secretsmanager,
    };
    for (const [logicalId, resource] of resourcesOfType(this.stack.template, 'AWS::Lambda::Function')) {
      const props = this.resolve(resource.Properties ?? {}) as {
        Handler?: string;
        Timeout?: number;
        MemorySize?: number;
        Runtime?: string;
        Environment?: { Variables?: Record<string, string> };
        LoggingConfig?: { LogGroup?: string };
      };
      const values = this.context.resources[logicalId]!;
      const fn = new RehearsedFunction(
        {
          logicalId,
          functionName: values.ref,
          functionArn: values.attributes['Arn']!,
          handler: props.Handler ?? 'index.handler',
          assetDir: assetDirOf(this.stack, logicalId),
          timeoutSeconds: props.Timeout ?? 3,
          memoryMb: props.MemorySize ?? 128,
          environment: Object.fromEntries(Object.entries(props.Environment?.Variables ?? {}).map(([k, v]) => [k, String(v)])),
          logGroupName: props.LoggingConfig?.LogGroup ?? `/aws/lambda/${values.ref}`,
          runtime: props.Runtime ?? 'nodejs',
        },
        {
          region: this.region,
          awsEndpoints,
          egress: this.egress,
          workDir: this.options.workDir,
          serving: (session, event) => this.peers.recorder.serving(session, event),
        },
        (line) => {
          this.lines.push(line);
          this.options.onLine?.(line);
        },
        // What the platform records of a function error: Lambda's Errors metric.
        () =>
          this.platformMetrics.push({ namespace: 'AWS/Lambda', name: 'Errors', dimensions: { FunctionName: values.ref }, at: Date.now() }),
      );
      this.functions.set(logicalId, fn);
    }
  }

  private functionByArn(arn: unknown): RehearsedFunction | undefined {
    for (const [logicalId, fn] of this.functions) {
      const values = this.context.resources[logicalId]!;
      if (arn === values.attributes['Arn'] || arn === values.ref) return fn;
    }
    return undefined;
  }

  /** `POST /webhook` → its integration → its function, from the template's routes. */
  private routes(): GatewayRoute[] {
    const integrations = new Map(
      resourcesOfType(this.stack.template, 'AWS::ApiGatewayV2::Integration').map(([logicalId, resource]) => [
        this.context.resources[logicalId]!.ref,
        this.resolve(resource.Properties ?? {}) as Record<string, unknown>,
      ]),
    );
    const routeSettings = (this.stageSetting('RouteSettings') ?? {}) as Record<string, unknown>;
    return resourcesOfType(this.stack.template, 'AWS::ApiGatewayV2::Route').map(([logicalId, resource]) => {
      const props = this.resolve(resource.Properties ?? {}) as { RouteKey: string; Target?: string };
      const integration = integrations.get(String(props.Target ?? '').replace(/^integrations\//, ''));
      if (!integration) throw new Error(`route ${logicalId} (${props.RouteKey}) has no integration in the template`);
      if (integration['IntegrationType'] !== 'AWS_PROXY' || integration['PayloadFormatVersion'] !== '2.0') {
        throw new Error(`route ${props.RouteKey}: only Lambda proxy integrations with payload 2.0 are rehearsed`);
      }
      const fn = this.functionByArn(integration['IntegrationUri']);
      if (!fn) throw new Error(`route ${props.RouteKey} integrates ${String(integration['IntegrationUri'])}, not a function of this stack`);
      const [method, path] = props.RouteKey.split(' ') as [string, string];
      const handler = async (event: unknown) => (await fn.call(event)) as APIGatewayProxyResultV2;
      return { method, path, createHandler: () => handler, throttle: throttleOf(routeSettings[props.RouteKey]) };
    });
  }

  /** Each AWS::Lambda::EventSourceMapping on a queue becomes a poller with its settings. */
  private startEventSources(): void {
    for (const [logicalId, resource] of resourcesOfType(this.stack.template, 'AWS::Lambda::EventSourceMapping')) {
      const props = this.resolve(resource.Properties ?? {}) as {
        EventSourceArn: string;
        FunctionName: string;
        BatchSize?: number;
        MaximumBatchingWindowInSeconds?: number;
        FunctionResponseTypes?: string[];
        ScalingConfig?: { MaximumConcurrency?: number };
      };
      const queue = this.queues().find((q) => this.context.resources[q.logicalId]!.attributes['Arn'] === props.EventSourceArn);
      if (!queue) throw new Error(`${logicalId}: event source ${props.EventSourceArn} is not a queue of this stack`);
      const fn = this.functionByArn(props.FunctionName);
      if (!fn) throw new Error(`${logicalId}: ${props.FunctionName} is not a function of this stack`);
      const handler = async (event: unknown) => ((await fn.call(event)) ?? undefined) as SQSBatchResponse | void;
      const poller = new LambdaPoller({
        client: createLocalSqsClient(this.peers.sqs.url),
        queueUrl: queue.url,
        queueArn: props.EventSourceArn,
        region: this.region,
        createHandler: () => handler,
        batchSize: props.BatchSize ?? 10,
        // The batching window is queue time in which nothing runs: compressed too (a receive still long-polls for 1 s, so
        // records sent together still share a batch), where a lone record would otherwise wait the template's 5 s out on each receive.
        batchingWindowSeconds: (props.MaximumBatchingWindowInSeconds ?? 0) / TIME_SCALE,
        reportBatchItemFailures: (props.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures'),
        // Lambda's default for an SQS source without a maximum: scale out; 5 pollers stand in for it.
        concurrency: props.ScalingConfig?.MaximumConcurrency ?? 5,
        waitTimeSeconds: 1,
        // The environment enforces the function's timeout; the poller only needs to outlast it.
        functionTimeoutMs: (fn.spec.timeoutSeconds + 5) * 1000,
        functionName: fn.spec.functionName,
        // Lambda's event source leaves a failed record hidden for the rest of its visibility timeout; here that wait is compressed.
        onBatch: (outcome) => {
          if (outcome.failed.length > 0) this.peers.sqs.expedite(queue.url, outcome.failed);
        },
      });
      poller.start();
      this.pollers.push(poller);
    }
  }

  // -- what the platform would record --------------------------------------------------------

  private onRequest(info: GatewayRequestInfo): void {
    const at = Date.now();
    const count = (name: string) => this.platformMetrics.push({ namespace: 'AWS/ApiGateway', name, dimensions: { ApiId: this.apiId }, at });
    count('Count');
    if (info.status >= 500) count('5xx');
    else if (info.status >= 400) count('4xx');
    this.writeAccessLog(info);
  }

  /** The stage's access log line for a request, in the template's format. */
  private writeAccessLog(info: GatewayRequestInfo): void {
    const settings = this.stageSetting('AccessLogSettings') as { DestinationArn?: string; Format?: string } | undefined;
    if (!settings?.Format || !settings.DestinationArn) return;
    const values: Record<string, string> = {
      'context.requestId': info.event?.requestContext.requestId ?? '-',
      'context.requestTime': new Date().toUTCString(),
      'context.identity.sourceIp': '127.0.0.1',
      'context.identity.userAgent': info.event?.headers['user-agent'] ?? '-',
      'context.routeKey': info.event?.routeKey ?? info.routeKey ?? '-',
      'context.status': String(info.status),
      'context.responseLength': '-',
      'context.responseLatency': String(Math.round(info.durationMs)),
      'context.integrationStatus': info.result ? '200' : '-',
      'context.integrationLatency': String(Math.round(info.durationMs)),
      'context.integrationErrorMessage': '-',
      'context.error.message': '-',
    };
    const line = settings.Format.replace(/\$(context(?:\.[A-Za-z]+)+)/g, (match, name: string) => values[name] ?? '-');
    this.accessLog.push({ logGroupArn: settings.DestinationArn, line });
  }

  /** SQS publishes queue metrics while a queue holds messages. */
  private async sampleQueues(): Promise<void> {
    try {
      for (const queue of this.queues()) {
        const counts = await this.queueCounts(queue.url);
        const dimensions = { QueueName: queue.name };
        const at = Date.now();
        if (counts.visible > 0)
          this.platformMetrics.push({ namespace: 'AWS/SQS', name: 'ApproximateNumberOfMessagesVisible', dimensions, at });
        if (counts.visible + counts.inFlight > 0) {
          this.platformMetrics.push({ namespace: 'AWS/SQS', name: 'ApproximateAgeOfOldestMessage', dimensions, at });
        }
      }
    } catch {
      // Sampling stops mattering once the rehearsal closes the queues.
    }
  }
}

function throttleOf(value: unknown): Throttle | undefined {
  const settings = value as { ThrottlingRateLimit?: number; ThrottlingBurstLimit?: number } | undefined;
  if (settings?.ThrottlingRateLimit === undefined || settings.ThrottlingBurstLimit === undefined) return undefined;
  return { rateLimit: settings.ThrottlingRateLimit, burstLimit: settings.ThrottlingBurstLimit };
}

/** The Slack function's workspace variables in the template (the function that has SLACK_SIGNING_SECRET_SECRET_ARN). */
export function slackIdentityOf(template: StackArtifact['template']): SlackIdentity {
  for (const [, resource] of resourcesOfType(template, 'AWS::Lambda::Function')) {
    const variables = (resource.Properties?.['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    if (variables[ENV.slackSigningSecretSecretArn] === undefined) continue;
    const text = (name: string): string | undefined => (typeof variables[name] === 'string' ? variables[name] : undefined);
    return {
      // The first listed workspace plays the local Slack's; the rest are served the same way.
      teamId: text(ENV.slackTeamIds)?.split(',')[0],
      enterpriseId: text(ENV.slackEnterpriseId),
      appId: text(ENV.slackAppId),
      clientId: text(ENV.slackClientId),
    };
  }
  return { teamId: undefined, enterpriseId: undefined, appId: undefined, clientId: undefined };
}

/** fetch for this process (the simulator's webhook sender), with the rehearsal's network. */
export function egressFetch(egress: Record<string, string>): typeof fetch {
  const direct = globalThis.fetch;
  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url);
    const target = egress[url.origin];
    const local = target ? new URL(`${url.pathname}${url.search}`, target).toString() : url.toString();
    return direct(local, init);
  };
}

/**
 * The per-client-address rate limit (`clientRateLimitEnabled`): CloudFront in front of the HTTP API
 * with a WAF web ACL holding one rate-based rule per source address. A WAF web ACL cannot attach
 * to an HTTP API, and a REST API would hand the ingest function payload format 1.0, so CloudFront
 * it is. CloudFront takes only `CLOUDFRONT`-scope web ACLs, which AWS keeps in us-east-1: the ACL
 * (and the alarm on its metric, which lives there too) is a small second stack in us-east-1; the
 * distribution stays in the stage's stack and reads the ACL's ARN with a weak cross-region
 * reference (`Fn::GetStackOutput`: no custom resource, no Lambda). `cdk deploy --all` deploys the
 * ACL stack first (a stack dependency).
 */
import { Duration, ReferenceStrength, Stack, Tags, Validations, type Environment } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { HTTP_PATHS, stackNameFor } from '../shared/contracts';
import type { BridgeConfig } from './config';
import { ConfigError } from '../shared/config-env';

/** AWS keeps `CLOUDFRONT`-scope web ACLs (and their metrics) in this region only. */
export const EDGE_REGION = 'us-east-1';
/** The rule's window: the config key counts requests per five minutes. */
export const RATE_WINDOW_SECONDS = 300;
export const RATE_RULE_NAME = 'PerClientAddress';
export const BLOCKED_ALARM_ID = 'ClientRateLimited';

/**
 * `VisibilitySlackBridge-<stage>-edge-<stage's region>`: every stage region's ACL stack lives in
 * us-east-1, so the name holds that region (one stage in two regions must not collide).
 */
export function edgeStackNameFor(stage: string, region: string): string {
  return `${stackNameFor(stage)}-edge-${region}`;
}

/** The stage stack's region, which the edge stack's name and the cross-region reference need spelled out. */
export function requireStageRegion(config: BridgeConfig, env: Environment | undefined): string {
  const region = env?.region;
  if (region === undefined || region.includes('${Token')) {
    throw ConfigError.inFile(
      'clientRateLimitEnabled',
      config.source,
      'needs the stage’s region at synth time (the rate limit adds a stack in us-east-1 that the stage’s stack references): ' +
        'run cdk with AWS credentials or set CDK_DEFAULT_REGION (and CDK_DEFAULT_ACCOUNT), or set it to false',
    );
  }
  return region;
}

export interface ClientRateLimitStackProps {
  readonly config: BridgeConfig;
  /** The stage stack's region (named in this stack's name). */
  readonly stageRegion: string;
  readonly account?: string | undefined;
}

/** us-east-1: the `CLOUDFRONT`-scope web ACL with the per-address rate rule, and the alarm on what it blocks. */
export class ClientRateLimitStack extends Stack {
  readonly webAcl: CfnWebACL;
  readonly blockedAlarm: Alarm;
  readonly webAclName: string;

  constructor(scope: Construct, props: ClientRateLimitStackProps) {
    const { config, stageRegion } = props;
    const stackName = edgeStackNameFor(config.stage, stageRegion);
    super(scope, stackName, {
      stackName,
      env: { region: EDGE_REGION, ...(props.account === undefined ? {} : { account: props.account }) },
      description: `Per-client-address rate limit (WAF) in front of the Slack bridge webhook (${config.stage}, ${stageRegion})`,
      terminationProtection: !config.development,
    });
    Tags.of(this).add('project', 'visibility-slack-bridge');
    Tags.of(this).add('stage', config.stage);
    this.webAclName = stackName;
    this.webAcl = createWebAcl(this, this.webAclName, config.clientRateLimitPerFiveMinutes);
    this.blockedAlarm = createBlockedAlarm(this, this.webAclName, config.clientRateLimitPerFiveMinutes);
  }
}

function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { metricName, cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true };
}

function createWebAcl(scope: Construct, name: string, limit: number): CfnWebACL {
  return new CfnWebACL(scope, 'WebAcl', {
    name,
    description: `At most ${limit} requests per client address in any ${RATE_WINDOW_SECONDS / 60} minutes reach the webhook`,
    scope: 'CLOUDFRONT',
    defaultAction: { allow: {} },
    visibilityConfig: visibility(name),
    rules: [
      {
        name: RATE_RULE_NAME,
        priority: 0,
        // CloudFront hands WAF the viewer's address, so IP is the client, not an edge location.
        statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit, evaluationWindowSec: RATE_WINDOW_SECONDS } },
        action: { block: {} },
        visibilityConfig: visibility(RATE_RULE_NAME),
      },
    ],
  });
}

/** WAF's count of requests the rate rule refused (403), as CloudWatch holds it in us-east-1. */
export function blockedRequestsMetric(webAclName: string): Metric {
  return new Metric({
    namespace: 'AWS/WAFV2',
    metricName: 'BlockedRequests',
    dimensionsMap: { WebACL: webAclName, Rule: RATE_RULE_NAME },
    statistic: 'Sum',
    period: Duration.minutes(5),
    region: EDGE_REGION,
  });
}

/**
 * Informational: it has no action, because alarms notify only topics in their own region and the
 * alarm topic lives in the stage's region. It shows on the stage's dashboard.
 */
function createBlockedAlarm(scope: Stack, webAclName: string, limit: number): Alarm {
  return new Alarm(scope, BLOCKED_ALARM_ID, {
    alarmName: `${scope.stackName}-${BLOCKED_ALARM_ID}`,
    alarmDescription:
      `Informational: WAF refused (403) requests from client addresses that sent more than ${limit} in 5 minutes. ` +
      'A flood is being kept off the webhook; if the service’s own deliveries are refused, raise clientRateLimitPerFiveMinutes.',
    metric: blockedRequestsMetric(webAclName),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

export interface WebhookFrontProps {
  readonly config: BridgeConfig;
  readonly api: HttpApi;
  /** The web ACL in us-east-1 (ClientRateLimitStack). */
  readonly webAcl: CfnWebACL;
  /** The API's custom domain when it has one (its execute-api host is then disabled); default the execute-api host. */
  readonly originDomainName?: string | undefined;
}

/**
 * The CloudFront distribution the service and Slack are pointed at: every request (`/webhook`,
 * `/slack/commands`, `/slack/interactions`) passes the web ACL, then reaches the API unchanged: the
 * body as sent and every viewer header but Host, so the X-Service-Signature and X-Slack-Signature /
 * X-Slack-Request-Timestamp the functions verify arrive as signed.
 */
export class WebhookFront extends Construct {
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: WebhookFrontProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const originHost = props.originDomainName ?? `${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const origin = new HttpOrigin(originHost, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [OriginSslPolicy.TLS_V1_2],
      readTimeout: Duration.seconds(30),
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Slack bridge webhook and Slack app (${props.config.stage}): per-client rate limit in front of the HTTP API`,
      // One behaviour for every path: the webhook and the Slack routes need the same treatment.
      defaultBehavior: {
        origin,
        // POST needs the full method set; the API itself only routes POST /webhook and POST /slack/*.
        allowedMethods: AllowedMethods.ALLOW_ALL,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        // Nothing cached: every delivery, command and click reaches the functions.
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Every viewer header (X-Service-Signature, X-Service-Delivery, X-Slack-Signature,
        // X-Slack-Request-Timestamp, Content-Type) except Host, which must name the origin's domain
        // for API Gateway to route the request. The body is forwarded as received (no compression).
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
      },
      // Weak: Fn::GetStackOutput reads the ARN across regions; a strong reference would add an SSM
      // export writer (a custom-resource Lambda) to the ACL stack.
      webAclId: Stack.consumeReference(props.webAcl.attrArn, ReferenceStrength.WEAK),
      priceClass: PriceClass.PRICE_CLASS_100,
      httpVersion: HttpVersion.HTTP2_AND_3,
    });
    acknowledgeDistributionFindings(this.distribution);
    Validations.of(stack).acknowledge({
      id: 'Annotation::@aws-cdk/core:crossStackReferencesDefaultStrong',
      reason:
        'The only cross-stack reference (the web ACL ARN) is weak by choice, set on the reference itself: Fn::GetStackOutput ' +
        'needs no SSM export writer (a custom-resource Lambda) in the us-east-1 stack.',
    });
  }

  /** `https://<distribution>.cloudfront.net`: the base of the webhook URL and of the Slack request URLs. */
  get baseUrl(): string {
    return `https://${this.distribution.distributionDomainName}`;
  }

  /** The URL to register with the service. */
  get webhookUrl(): string {
    return `${this.baseUrl}${HTTP_PATHS.webhook}`;
  }
}

function acknowledgeDistributionFindings(distribution: Distribution): void {
  Validations.of(distribution).acknowledge(
    {
      id: 'AwsSolutions-CFR1',
      reason:
        'The visibility service delivers from addresses it does not publish, in regions it does not promise; a geo ' +
        'restriction could refuse its deliveries (each refusal counts toward its 15-failure switch-off).',
    },
    {
      id: 'AwsSolutions-CFR3',
      reason:
        'Every request that passes the web ACL is logged by the HTTP API access log (status, latency, error); refused ' +
        'requests are counted by the WAF metrics and alarm. Standard logs would need an S3 bucket with ACLs for no extra answer.',
    },
    {
      id: 'AwsSolutions-CFR4',
      reason:
        'The distribution uses the default *.cloudfront.net certificate (no custom domain), with which CloudFront fixes ' +
        'the viewer minimum to TLSv1; the origin connection is TLS 1.2 only. A custom domain with a TLSv1.2_2021 policy removes it.',
    },
  );
}

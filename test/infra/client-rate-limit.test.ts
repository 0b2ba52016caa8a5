/**
 * clientRateLimitEnabled: off by default (no CloudFront, no WAF); on, a us-east-1 stack with the
 * CLOUDFRONT-scope web ACL and its rate rule, and a distribution in the stage's stack that uses it
 * and becomes the webhook URL and the Slack request URLs. Both stacks pass cdk-nag and CloudFormation
 * schema validation. And the custom domain (customDomainName), which closes the execute-api endpoint.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HTTP_PATHS, STACK_OUTPUTS } from '../../shared/contracts';
import { ConfigError } from '../../shared/config-env';
import { logicalId, ref, synthApp } from './helpers';

const ACCOUNT = '123456789012';
const STAGE_REGION = 'eu-west-1';
const env = { account: ACCOUNT, region: STAGE_REGION };
const outdir = mkdtempSync(join(tmpdir(), 'bridge-waf-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
const resourcesOf = (template: Template): Resources => (template.toJSON() as { Resources: Resources }).Resources;
const outputValue = (template: Template, key: string): unknown =>
  (template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs[key]!.Value;

describe('switched off (default)', () => {
  const built = synthApp({}, { env });

  it('adds no CloudFront or WAF resource and no second stack', () => {
    const types = Object.values(resourcesOf(built.template)).map((resource) => resource.Type);
    expect(types.filter((type) => type.startsWith('AWS::CloudFront::') || type.startsWith('AWS::WAFv2::'))).toEqual([]);
    expect(built.edge).toBeUndefined();
    expect(built.app.node.children.filter((child) => child instanceof Stack).map((stack) => stack.node.id)).toEqual([
      'VisibilitySlackBridge-dev',
    ]);
  });

  it('the webhook URL is the execute-api endpoint', () => {
    expect(JSON.stringify(outputValue(built.template, STACK_OUTPUTS.webhookUrl))).toContain('.execute-api.');
  });
});

describe('switched on', () => {
  const built = synthApp({ clientRateLimitEnabled: true, clientRateLimitPerFiveMinutes: 600 }, { env, cfnValidation: true, outdir });
  const { template, stack } = built;
  const edge = built.edge!;
  const edgeTemplate = Template.fromStack(edge);
  const distributionId = logicalId(template, 'AWS::CloudFront::Distribution', 'ClientRateLimitDistribution');
  const config = (): Record<string, unknown> =>
    resourcesOf(template)[distributionId]!.Properties['DistributionConfig'] as Record<string, unknown>;

  it('puts the web ACL stack in us-east-1, named after the stage and the stage’s region, deployed first', () => {
    expect(edge.region).toBe('us-east-1');
    expect(edge.account).toBe(ACCOUNT);
    expect(edge.stackName).toBe('VisibilitySlackBridge-dev-edge-eu-west-1');
    expect(stack.dependencies).toContain(edge);
  });

  it('holds a CLOUDFRONT-scope web ACL that allows by default and blocks an address over the limit per 5 minutes', () => {
    edgeTemplate.resourceCountIs('AWS::WAFv2::WebACL', 1);
    edgeTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
      Name: edge.stackName,
      Scope: 'CLOUDFRONT',
      DefaultAction: { Allow: {} },
      VisibilityConfig: { CloudWatchMetricsEnabled: true, MetricName: edge.stackName, SampledRequestsEnabled: true },
      Rules: [
        {
          Name: 'PerClientAddress',
          Priority: 0,
          Action: { Block: {} },
          Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 600, EvaluationWindowSec: 300 } },
          VisibilityConfig: { CloudWatchMetricsEnabled: true, MetricName: 'PerClientAddress', SampledRequestsEnabled: true },
        },
      ],
    });
  });

  it('alarms (informational, no action) on requests the rule blocked', () => {
    edgeTemplate.resourceCountIs('AWS::CloudWatch::Alarm', 1);
    edgeTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${edge.stackName}-ClientRateLimited`,
      Namespace: 'AWS/WAFV2',
      MetricName: 'BlockedRequests',
      Dimensions: Match.arrayEquals([
        { Name: 'Rule', Value: 'PerClientAddress' },
        { Name: 'WebACL', Value: edge.stackName },
      ]),
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: Match.absent(),
    });
  });

  it('adds no custom resource or function to the web ACL stack (the reference is Fn::GetStackOutput)', () => {
    expect(
      Object.values(resourcesOf(edgeTemplate))
        .map((resource) => resource.Type)
        .sort(),
    ).toEqual(['AWS::CloudWatch::Alarm', 'AWS::WAFv2::WebACL']);
  });

  it('associates the web ACL with the distribution through the us-east-1 stack’s output', () => {
    const webAclRef = config()['WebACLId'] as { 'Fn::GetStackOutput': { StackName: string; Region: string; OutputName: string } };
    expect(webAclRef['Fn::GetStackOutput']).toMatchObject({ StackName: edge.stackName, Region: 'us-east-1' });
    const outputs = (edgeTemplate.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
    expect(outputs[webAclRef['Fn::GetStackOutput'].OutputName]!.Value).toEqual({ 'Fn::GetAtt': ['WebAcl', 'Arn'] });
  });

  it('forwards POST with every viewer header but Host, uncached, over HTTPS only, to the HTTP API', () => {
    const behavior = config()['DefaultCacheBehavior'] as Record<string, unknown>;
    expect(behavior['AllowedMethods']).toContain('POST');
    expect(behavior['CachePolicyId']).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
    expect(behavior['OriginRequestPolicyId']).toBe(OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId);
    expect(behavior['ViewerProtocolPolicy']).toBe('https-only');
    const [origin] = config()['Origins'] as { DomainName: unknown; CustomOriginConfig: Record<string, unknown> }[];
    expect(origin!.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'WebhookApi');
    expect(origin!.DomainName).toEqual({ 'Fn::Join': ['', [ref(apiId), `.execute-api.${STAGE_REGION}.`, ref('AWS::URLSuffix')]] });
  });

  it('the webhook URL output is the distribution’s /webhook', () => {
    expect(outputValue(template, STACK_OUTPUTS.webhookUrl)).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/webhook']],
    });
  });

  it('the Slack request URLs (and the base `bridge slack manifest` reads) go through the distribution too', () => {
    const viaCloudFront = (path: string): unknown => ({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, ...(path === '' ? [] : [path])]],
    });
    expect(outputValue(template, STACK_OUTPUTS.apiBaseUrl)).toEqual(viaCloudFront(''));
    expect(outputValue(template, STACK_OUTPUTS.slackCommandsUrl)).toEqual(viaCloudFront(HTTP_PATHS.slackCommands));
    expect(outputValue(template, STACK_OUTPUTS.slackInteractionsUrl)).toEqual(viaCloudFront(HTTP_PATHS.slackInteractions));
  });

  it('treats the Slack paths like the webhook: one behaviour, X-Slack-Signature and its timestamp forwarded, the body as sent', () => {
    // No path-specific behaviour that could cache, strip headers from or compress a Slack request.
    expect(config()['CacheBehaviors']).toBeUndefined();
    const behavior = config()['DefaultCacheBehavior'] as Record<string, unknown>;
    // AllViewerExceptHostHeader forwards every viewer header (x-slack-signature, x-slack-request-timestamp, content-type) but Host.
    expect(behavior['OriginRequestPolicyId']).toBe(OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId);
    expect(behavior['CachePolicyId']).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
    expect(behavior['Compress']).toBe(false);
    expect(behavior['FunctionAssociations']).toBeUndefined();
    expect(behavior['LambdaFunctionAssociations']).toBeUndefined();
  });

  it('shows the blocked requests (read in us-east-1) on the stage’s dashboard', () => {
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(body).toContain('BlockedRequests');
    expect(body).toContain('us-east-1'); // the stage is in eu-west-1: only the WAF metric names us-east-1
  });

  it('passes cdk-nag and schema validation, acknowledging only the distribution’s CFR1/3/4 and the weak reference', () => {
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((plugin) => plugin.violations)).toEqual([]);
    expect(new AwsSolutionsChecks().validateScope(built.app).violations).toEqual([]);
    const acks = built.app.node
      .findAll()
      .flatMap((construct) =>
        construct.node.metadata
          .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          .flatMap((entry) =>
            Object.keys(entry.data as Record<string, string>).map((id) => `${id.replace(/^annotation::/i, '')} @ ${construct.node.path}`),
          ),
      )
      // Those of the stack without the switch (nag.test.ts) stay as they are.
      .filter((ack) => !/^AwsSolutions-(APIG4|SMG4|IAM5\[Resource::arn:[^ ]*:secret:visibility-bridge\/dev\/connections\/\*\]) /.test(ack));
    expect(acks.sort()).toEqual([
      '@aws-cdk/core:crossStackReferencesDefaultStrong @ VisibilitySlackBridge-dev',
      ...['AwsSolutions-CFR1', 'AwsSolutions-CFR3', 'AwsSolutions-CFR4'].map(
        (id) => `${id} @ VisibilitySlackBridge-dev/ClientRateLimit/Distribution`,
      ),
    ]);
  });
});

describe('regions', () => {
  it('a stage in us-east-1 itself synthesizes too', () => {
    const built = synthApp({ clientRateLimitEnabled: true }, { env: { account: ACCOUNT, region: 'us-east-1' } });
    expect(built.edge!.stackName).toBe('VisibilitySlackBridge-dev-edge-us-east-1');
    built.template.resourceCountIs('AWS::CloudFront::Distribution', 1);
  });

  it('one stage in two regions gets two web ACL stacks with different names', () => {
    const names = ['eu-west-1', 'eu-central-1'].map(
      (region) => synthApp({ clientRateLimitEnabled: true }, { env: { account: ACCOUNT, region } }).edge!.stackName,
    );
    expect(new Set(names).size).toBe(2);
  });

  it('synthesizes both stacks identically twice (a redeploy changes nothing)', () => {
    const templates = (): unknown[] => {
      const built = synthApp({ clientRateLimitEnabled: true }, { env });
      return [built.template.toJSON(), Template.fromStack(built.edge!).toJSON()];
    };
    expect(templates()).toEqual(templates());
  });

  it('without a known region the synth fails naming the key and what to do', () => {
    vi.stubEnv('CDK_DEFAULT_REGION', undefined);
    vi.stubEnv('CDK_DEFAULT_ACCOUNT', undefined);
    const error = ((): unknown => {
      try {
        synthApp({ clientRateLimitEnabled: true });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    vi.unstubAllEnvs();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/"clientRateLimitEnabled" needs the stage’s region.*CDK_DEFAULT_REGION/);
  });
});

describe('custom domain', () => {
  const CERTIFICATE = `arn:aws:acm:${STAGE_REGION}:${ACCOUNT}:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0`;
  const DOMAIN = { customDomainName: 'slack-bridge.example.com', customDomainCertificateArn: CERTIFICATE };
  const built = synthApp(DOMAIN, { env });
  const { template } = built;
  const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'WebhookApi');
  const domainId = logicalId(template, 'AWS::ApiGatewayV2::DomainName', 'CustomDomain');

  it('is a regional API Gateway domain with the stage’s certificate, TLS 1.2, mapped to the API’s $default stage', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'slack-bridge.example.com',
      DomainNameConfigurations: [{ CertificateArn: CERTIFICATE, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' }],
    });
    const stageId = logicalId(template, 'AWS::ApiGatewayV2::Stage', 'DefaultStage');
    template.hasResource('AWS::ApiGatewayV2::ApiMapping', {
      Properties: { ApiId: ref(apiId), DomainName: ref(domainId), Stage: '$default' },
      DependsOn: [stageId],
    });
  });

  it('disables the default execute-api endpoint (only without a custom domain is it open)', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
    synthApp({}, { env }).template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: false });
  });

  it('the webhook and Slack request URLs use the domain, and the DNS target is an output', () => {
    expect(outputValue(template, STACK_OUTPUTS.webhookUrl)).toBe('https://slack-bridge.example.com/webhook');
    expect(outputValue(template, STACK_OUTPUTS.apiBaseUrl)).toBe('https://slack-bridge.example.com');
    expect(outputValue(template, STACK_OUTPUTS.slackCommandsUrl)).toBe(`https://slack-bridge.example.com${HTTP_PATHS.slackCommands}`);
    expect(outputValue(template, STACK_OUTPUTS.slackInteractionsUrl)).toBe(
      `https://slack-bridge.example.com${HTTP_PATHS.slackInteractions}`,
    );
    expect(outputValue(template, STACK_OUTPUTS.customDomainTarget)).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalDomainName'] });
  });

  it('with the rate limit, CloudFront reaches the API by the domain (the execute-api host is closed)', () => {
    const both = synthApp({ ...DOMAIN, clientRateLimitEnabled: true }, { env });
    const distributionId = logicalId(both.template, 'AWS::CloudFront::Distribution', 'ClientRateLimitDistribution');
    const distribution = resourcesOf(both.template)[distributionId]!.Properties['DistributionConfig'] as {
      Origins: { DomainName: unknown }[];
    };
    expect(distribution.Origins[0]!.DomainName).toBe('slack-bridge.example.com');
    expect(outputValue(both.template, STACK_OUTPUTS.slackCommandsUrl)).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, HTTP_PATHS.slackCommands]],
    });
    expect(new AwsSolutionsChecks().validateScope(both.app).violations).toEqual([]);
  });

  it('passes cdk-nag without an acknowledgement of its own', () => {
    expect(new AwsSolutionsChecks().validateScope(built.app).violations).toEqual([]);
  });

  it('a certificate of another region fails the synth, naming the key', () => {
    expect(() => synthApp({ ...DOMAIN, customDomainCertificateArn: CERTIFICATE.replace(STAGE_REGION, 'us-east-1') }, { env })).toThrow(
      /"customDomainCertificateArn" is in us-east-1, but a regional API domain needs a certificate in the stage's region eu-west-1/,
    );
  });
});

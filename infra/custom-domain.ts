/**
 * The API's custom domain (`customDomainName` + `customDomainCertificateArn`): a regional API Gateway
 * domain with the stage's certificate, mapped to the HTTP API's `$default` stage. With it the webhook
 * and Slack request URLs use the domain, and the default `execute-api` endpoint is disabled
 * (webhook.ts): a flood aimed at the old random host no longer reaches the stage at all.
 */
import { Stack, Token } from 'aws-cdk-lib';
import { ApiMapping, DomainName, EndpointType, SecurityPolicy, type HttpApi, type HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Construct } from 'constructs';
import type { BridgeConfig, CustomDomain } from './config';
import { ConfigError } from '../shared/config-env';

export interface ApiCustomDomainProps {
  readonly config: BridgeConfig;
  readonly domain: CustomDomain;
  readonly api: HttpApi;
  readonly stage: HttpStage;
}

export class ApiCustomDomain extends Construct {
  readonly domainName: DomainName;
  private readonly name: string;

  constructor(scope: Construct, id: string, props: ApiCustomDomainProps) {
    super(scope, id);
    requireCertificateInStageRegion(props.config, props.domain, Stack.of(this).region);
    this.name = props.domain.name;
    this.domainName = new DomainName(this, 'Domain', {
      domainName: props.domain.name,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new ApiMapping(this, 'Mapping', { api: props.api, domainName: this.domainName, stage: props.stage });
  }

  /** `https://<domain>`, without a trailing slash (spelled out: the outputs read as the operator wrote the name). */
  get baseUrl(): string {
    return `https://${this.name}`;
  }

  /** The regional API Gateway host the domain's DNS record (CNAME or alias) must point at. */
  get dnsTarget(): string {
    return this.domainName.regionalDomainName;
  }
}

/** A regional domain takes a certificate of its own region only; caught at synth when the region is known. */
function requireCertificateInStageRegion(config: BridgeConfig, domain: CustomDomain, stageRegion: string): void {
  const certificateRegion = domain.certificateArn.split(':')[3];
  if (Token.isUnresolved(stageRegion) || certificateRegion === stageRegion) return;
  throw ConfigError.inFile(
    'customDomainCertificateArn',
    config.source,
    `is in ${certificateRegion ?? '?'}, but a regional API domain needs a certificate in the stage's region ${stageRegion}: ` +
      `request or import one for ${domain.name} there`,
  );
}

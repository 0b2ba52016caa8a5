/**
 * The bridge's secrets: here the read-API key, the Slack bot token and the webhook signing secrets; the
 * Slack app's signing secret (slack-app.ts) is a BridgeSecret too. Each put command in the stack outputs
 * shows a value the functions accept. Each is either created by the stack holding SECRET_PLACEHOLDER (never
 * a real value in the template; the runtime treats the placeholder as "not set" and fails closed)
 * or imported from a complete ARN given in context.
 */
import { SecretValue, Stack, Validations } from 'aws-cdk-lib';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { SECRET_PLACEHOLDER } from '../shared/contracts';
import type { BridgeConfig } from './config';

export interface BridgeSecretProps {
  /** Complete ARN of an existing secret; undefined to create one. */
  readonly existingArn: string | undefined;
  readonly description: string;
  /** What to put, shown in the put-secret-value command, e.g. `'<read-API key>'`. */
  readonly exampleValue: string;
}

export class BridgeSecret extends Construct {
  readonly secret: ISecret;
  readonly created: boolean;
  private readonly exampleValue: string;
  private readonly region: string;

  constructor(scope: Construct, id: string, props: BridgeSecretProps) {
    super(scope, id);
    this.exampleValue = props.exampleValue;
    if (props.existingArn !== undefined) {
      // Secrets Manager is regional: the functions read the secret in the stack's region.
      this.secret = Secret.fromSecretCompleteArn(this, 'Imported', props.existingArn);
      this.created = false;
      this.region = props.existingArn.split(':')[3] ?? Stack.of(this).region;
      return;
    }
    // CloudFormation sets SecretString only when the template value changes, so an operator's
    // put-secret-value survives later deployments. Do not change the placeholder string.
    const secret = new Secret(this, 'Secret', {
      description: `${props.description} Holds "${SECRET_PLACEHOLDER}" until set with put-secret-value.`,
      secretStringValue: SecretValue.unsafePlainText(SECRET_PLACEHOLDER),
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The value is issued by a third party (visibility service key, Slack bot token, webhook signing secret) ' +
        'and cannot be rotated by a Lambda rotation function; it is rotated by putting a new value (signing secrets ' +
        'accept several values for overlap) and the functions pick it up within SECRETS_CACHE_SECONDS.',
    });
    // CDK's classes are not written for exactOptionalPropertyTypes; Secret is an ISecret at run time.
    this.secret = secret as ISecret;
    this.created = true;
    this.region = Stack.of(this).region;
  }

  /** The exact CLI command that puts the real value. */
  putValueCommand(): string {
    return (
      `aws secretsmanager put-secret-value --region ${this.region} ` +
      `--secret-id ${this.secret.secretArn} --secret-string ${this.exampleValue}`
    );
  }
}

/** The three secrets of one stage, each created or imported per the stage file. */
export class BridgeSecrets extends Construct {
  readonly readApiKey: BridgeSecret;
  readonly slackToken: BridgeSecret;
  readonly signingSecrets: BridgeSecret;

  constructor(scope: Construct, id: string, config: BridgeConfig) {
    super(scope, id);
    this.readApiKey = new BridgeSecret(this, 'ReadApiKey', {
      existingArn: config.readApiKeySecretArn,
      description: `Read-API key of the visibility service, sent as "Authorization: Bearer" by the digest function (${config.stage}).`,
      exampleValue: "'<read-API key>'",
    });
    this.slackToken = new BridgeSecret(this, 'SlackToken', {
      existingArn: config.slackTokenSecretArn,
      description: `Slack bot token (xoxb-...) the digest function posts with (${config.stage}).`,
      exampleValue: "'<xoxb-... Slack bot token>'",
    });
    this.signingSecrets = new BridgeSecret(this, 'SigningSecrets', {
      existingArn: config.signingSecretsSecretArn,
      description: `Webhook signing secrets as a JSON array of strings; several may be live during a rotation (${config.stage}).`,
      exampleValue: `'["<webhook signing secret>"]'`,
    });
  }
}

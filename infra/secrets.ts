/**
 * The bridge's three secrets. Each is either created by the stack holding SECRET_PLACEHOLDER (never
 * a real value in the template; the runtime treats the placeholder as "not set" and fails closed)
 * or imported from a complete ARN given in context.
 */
import { SecretValue, Stack, Validations } from 'aws-cdk-lib';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { SECRET_PLACEHOLDER } from './config';

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

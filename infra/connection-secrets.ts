/** Read access to the stage's connection secrets (ingest and digest both read them). */
import { ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import { connectionSecretPrefix } from '../shared/contracts';
import type { BridgeFunction } from './bridge-function';

/**
 * Lets `fn` read every connection secret of the stage, by their name prefix: connections are added after
 * the deploy (`bridge connections add` names their secrets `<prefix><id>`), so no ARN list can name them.
 */
export function allowConnectionSecrets(fn: BridgeFunction, stage: string): void {
  const arn = Stack.of(fn).formatArn({
    service: 'secretsmanager',
    resource: 'secret',
    resourceName: `${connectionSecretPrefix(stage)}*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  fn.allow('ReadConnectionSecrets', ['secretsmanager:GetSecretValue'], [arn]);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:${nagName(Stack.of(fn).region, '<AWS::Region>')}:${nagName(Stack.of(fn).account, '<AWS::AccountId>')}:secret:${connectionSecretPrefix(stage)}*]`,
    reason:
      'Connections are added after the deploy (bridge connections add), each with its own secret named under the ' +
      "stage's connection prefix; the wildcard covers only that prefix and only GetSecretValue.",
  });
}

/** How cdk-nag spells a stack's region or account in a finding: the value when the stack names it, else the pseudo parameter. */
function nagName(value: string, pseudo: string): string {
  return Token.isUnresolved(value) ? pseudo : value;
}

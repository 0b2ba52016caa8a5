/**
 * Logical ids of the stateful resources as the first (single-constructor) stack named them. The
 * stack is now composed of constructs, which would change these ids, and CloudFormation replaces
 * a resource whose id changes: a new empty table and queues, secrets back to the placeholder, a new
 * webhook URL. Pinning them makes the upgrade an in-place update.
 */
import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

export const STABLE_LOGICAL_IDS = {
  table: 'TableCD117FA1',
  dlq: 'DigestDlq40F93685',
  queue: 'DigestQueueD48DE8C7',
  readApiKey: 'ReadApiKeySecret6C6F1AC1',
  slackToken: 'SlackTokenSecret123E3CD6',
  signingSecrets: 'SigningSecretsSecretB9250B1B',
  ingestLogs: 'IngestLogs7327CBDC',
  digestLogs: 'DigestLogs5285A4EC',
  api: 'WebhookApi28122C53',
  stage: 'DefaultStageEE28A986',
  accessLogs: 'ApiAccessLogsE9DF007D',
} as const;

/** Gives the construct's CloudFormation resource the logical id `id`. */
export function keepLogicalId(construct: IConstruct, id: string): void {
  const resource = construct instanceof CfnResource ? construct : construct.node.defaultChild;
  if (!(resource instanceof CfnResource)) throw new Error(`${construct.node.path} has no CloudFormation resource to pin`);
  resource.overrideLogicalId(id);
}

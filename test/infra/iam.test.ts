/**
 * Least privilege: every statement of both function roles, with exact actions and resources.
 */
import { describe, expect, it } from 'vitest';
import { connectionSecretPrefix, TABLE } from '../../shared/contracts';
import { actionsOf, arnOf, leadingKeys, logicalId, ref, resourcesOf, roleStatements, statementBySid, synthApp } from './helpers';

const STAGE = 'dev';
const { template } = synthApp({}, { stage: STAGE });

const tableId = logicalId(template, 'AWS::DynamoDB::Table', 'Table');
const queueId = logicalId(template, 'AWS::SQS::Queue', 'DigestQueue');
const dlqId = logicalId(template, 'AWS::SQS::Queue', 'DigestDlq');
const readApiKeyId = logicalId(template, 'AWS::SecretsManager::Secret', 'ReadApiKey');
const slackTokenId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackToken');
const signingId = logicalId(template, 'AWS::SecretsManager::Secret', 'SigningSecrets');
const ingestLogsId = logicalId(template, 'AWS::Logs::LogGroup', 'IngestLogs');
const digestLogsId = logicalId(template, 'AWS::Logs::LogGroup', 'DigestLogs');

const ingest = roleStatements(template, 'WebhookIngestRole');
const digest = roleStatements(template, 'DigestWorkerDigestRole');

interface RoleProps {
  AssumeRolePolicyDocument: { Statement: { Principal: unknown; Action: string }[] };
  ManagedPolicyArns?: unknown[];
  Policies?: unknown[];
}
const role = (prefix: string): RoleProps =>
  (template.toJSON() as { Resources: Record<string, { Properties: RoleProps }> }).Resources[logicalId(template, 'AWS::IAM::Role', prefix)]!
    .Properties;

/** GetSecretValue on the stage's connection secrets only: `…:secret:visibility-bridge/<stage>/connections/*`. */
function expectConnectionSecrets(statement: ReturnType<typeof statementBySid>): void {
  expect(actionsOf(statement)).toEqual(['secretsmanager:GetSecretValue']);
  const resources = resourcesOf(statement);
  expect(resources).toHaveLength(1);
  expect(JSON.stringify(resources[0])).toContain(`:secret:${connectionSecretPrefix(STAGE)}*`);
  expect(JSON.stringify(resources[0]).match(/\*/g)).toHaveLength(1);
}

describe('function roles', () => {
  it('only Lambda can assume them, and they have no managed or extra inline policies', () => {
    for (const prefix of ['WebhookIngestRole', 'DigestWorkerDigestRole']) {
      expect(role(prefix).AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      expect(role(prefix).ManagedPolicyArns).toBeUndefined();
      expect(role(prefix).Policies).toBeUndefined();
    }
  });

  it("use no wildcard actions or resources (but the connection secrets' name prefix) and only Allow", () => {
    for (const statement of [...ingest, ...digest]) {
      expect(statement.Effect).toBe('Allow');
      for (const action of actionsOf(statement)) expect(action).not.toContain('*');
      // Connections are added after the deploy (`bridge connections add`): their secrets are matched by name prefix.
      if (statement.Sid === 'ReadConnectionSecrets') continue;
      for (const resource of resourcesOf(statement)) expect(JSON.stringify(resource)).not.toContain('*');
      // Only the DynamoDB statements are conditioned (on their key prefixes).
      if (statement.Condition !== undefined) expect(actionsOf(statement).every((action) => action.startsWith('dynamodb:'))).toBe(true);
    }
  });
});

describe('ingest role', () => {
  it("has exactly seven statements: logs, table, queue, DLQ, signing secret, connections' items and secrets", () => {
    expect(ingest.map((statement) => statement.Sid).sort()).toEqual([
      'DeliveryDedupRecords',
      'EnqueueEvents',
      'QuarantineDeliveries',
      'ReadConnectionSecrets',
      'ReadConnections',
      'ReadSigningSecrets',
      'WriteOwnLogs',
    ]);
  });

  it('writes only to its own log group', () => {
    const statement = statementBySid(ingest, 'WriteOwnLogs');
    expect(actionsOf(statement)).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(resourcesOf(statement)).toEqual([arnOf(ingestLogsId)]);
  });

  it('may Get/Put/Update/Delete items of the table, delivery# keys only', () => {
    const statement = statementBySid(ingest, 'DeliveryDedupRecords');
    expect(actionsOf(statement)).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    expect(statement.Condition).toEqual(leadingKeys([TABLE.prefixes.delivery], [TABLE.prefixes.delivery]));
  });

  it('may send to the DLQ only to quarantine a signed delivery it cannot process', () => {
    const statement = statementBySid(ingest, 'QuarantineDeliveries');
    expect(actionsOf(statement)).toEqual(['sqs:SendMessage']);
    expect(resourcesOf(statement)).toEqual([arnOf(dlqId)]);
  });

  it('may send messages to the digest queue only', () => {
    const statement = statementBySid(ingest, 'EnqueueEvents');
    expect(actionsOf(statement)).toEqual(['sqs:SendMessage']);
    expect(resourcesOf(statement)).toEqual([arnOf(queueId)]);
  });

  it('may read the signing secrets only', () => {
    const statement = statementBySid(ingest, 'ReadSigningSecrets');
    expect(actionsOf(statement)).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statement)).toEqual([ref(signingId)]);
  });

  it("may read connections' items (GetItem, conn# keys only) and their secrets, by the stage's name prefix", () => {
    const items = statementBySid(ingest, 'ReadConnections');
    expect(actionsOf(items)).toEqual(['dynamodb:GetItem']);
    expect(resourcesOf(items)).toEqual([arnOf(tableId)]);
    expect(items.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.connection}*`] } });
    expectConnectionSecrets(statementBySid(ingest, 'ReadConnectionSecrets'));
  });

  it('cannot touch the read-API key or the Slack token', () => {
    const text = JSON.stringify(ingest);
    expect(text).not.toContain(readApiKeyId);
    expect(text).not.toContain(slackTokenId);
  });

  it('cannot receive, delete or otherwise consume queue messages', () => {
    const sqsActions = ingest.flatMap(actionsOf).filter((action) => action.startsWith('sqs:'));
    expect(sqsActions).toEqual(['sqs:SendMessage', 'sqs:SendMessage']);
  });
});

describe('digest role', () => {
  it('has exactly fifteen statements: logs, table, Slack app items, weekly reports, quiet hours, connections, DLQ, paced re-sends, four secrets, consumption of two queues', () => {
    expect(digest).toHaveLength(15);
    expect(
      digest
        .map((statement) => statement.Sid)
        .filter(Boolean)
        .sort(),
    ).toEqual([
      'ConnectionsReadAndCadence',
      'DigestClaimsAndSnapshots',
      'QuarantineUnusableMessages',
      'QuietHoursHeldDigests',
      'ReadActionSigningKey',
      'ReadApiKeyAndSlackToken',
      'ReadConnectionSecrets',
      'RequeuePacedRecords',
      'SlackPacingAndChannelPosts',
      'SlackSubscriptions',
      'WeeklyClaimsAndBaselines',
      'WeeklySchedulesRead',
      'WriteOwnLogs',
    ]);
  });

  it('may send to the DLQ only, to quarantine an unusable record with its reason', () => {
    const statement = statementBySid(digest, 'QuarantineUnusableMessages');
    expect(actionsOf(statement)).toEqual(['sqs:SendMessage']);
    expect(resourcesOf(statement)).toEqual([arnOf(dlqId)]);
  });

  it('writes only to its own log group', () => {
    const statement = statementBySid(digest, 'WriteOwnLogs');
    expect(actionsOf(statement)).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(resourcesOf(statement)).toEqual([arnOf(digestLogsId)]);
  });

  it('may Get/Update items of the table only (no Put, Delete, Scan or Query), digest# and snapshot# keys only', () => {
    const statement = statementBySid(digest, 'DigestClaimsAndSnapshots');
    expect(actionsOf(statement)).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    const claims = [TABLE.prefixes.digest, TABLE.prefixes.snapshot];
    expect(statement.Condition).toEqual(leadingKeys(claims, claims));
  });

  it("may read and note connections' items (conn# keys only, no Put, Delete, Scan or Query) and read their secrets", () => {
    const items = statementBySid(digest, 'ConnectionsReadAndCadence');
    expect(actionsOf(items)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(items)).toEqual([arnOf(tableId)]);
    expect(items.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.connection}*`] } });
    expectConnectionSecrets(statementBySid(digest, 'ReadConnectionSecrets'));
  });

  it('may read the read-API key and the Slack token only', () => {
    const statement = statementBySid(digest, 'ReadApiKeyAndSlackToken');
    expect(actionsOf(statement)).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statement)).toEqual([ref(readApiKeyId), ref(slackTokenId)]);
    expect(JSON.stringify(digest)).not.toContain(signingId);
  });

  it('consumes the digest queue only (event source grant), and sends to it only to re-send a paced record', () => {
    const statement = digest.find((candidate) => actionsOf(candidate).includes('sqs:ReceiveMessage'))!;
    expect(actionsOf(statement)).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    expect(resourcesOf(statement)).toEqual([arnOf(queueId)]);
    const sends = digest.filter((candidate) => actionsOf(candidate).includes('sqs:SendMessage'));
    expect(sends.flatMap(resourcesOf)).toHaveLength(2);
    expect(sends.flatMap(resourcesOf)).toEqual(expect.arrayContaining([arnOf(dlqId), arnOf(queueId)]));
    const requeue = statementBySid(digest, 'RequeuePacedRecords');
    expect(actionsOf(requeue)).toEqual(['sqs:SendMessage']);
    expect(resourcesOf(requeue)).toEqual([arnOf(queueId)]);
  });
});

describe('other principals', () => {
  it("the only IAM policies in the stack belong to the three function roles and the weekly and quiet-hours schedules' roles", () => {
    template.resourceCountIs('AWS::IAM::Role', 5);
    template.resourceCountIs('AWS::IAM::Policy', 5);
  });
});

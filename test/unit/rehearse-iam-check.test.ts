/**
 * The rehearsal's IAM check on the real synthesized stack (bundling skipped): calls the functions make
 * are allowed by their roles, a key of another prefix or a removed statement is denied, and the denial
 * names the call and the statement or condition that is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { RecordedAwsCall } from '../../local/rehearse/aws-call-recorder';
import type { CfnTemplate } from '../../local/rehearse/assembly';
import { checkCalls, describeDenial, rolePolicies, type RolePolicies } from '../../local/rehearse/iam-check';
import type { ResolveContext, ResourceValues } from '../../local/rehearse/intrinsics';
import { TABLE } from '../../shared/contracts';
import { STACK_TENANT, tenantKey, tenantSessionPolicy, type Tenant } from '../../shared/tenancy';
import { logicalId, synthApp } from '../infra/helpers';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

/** Local values for every resource, shaped as CloudFormation returns them for its type. */
function localValues(template: CfnTemplate): ResolveContext {
  const resources: Record<string, ResourceValues> = {};
  for (const [id, resource] of Object.entries(template.Resources)) resources[id] = valuesOf(id, resource.Type);
  return {
    region: REGION,
    accountId: ACCOUNT,
    partition: 'aws',
    stackName: 'VisibilitySlackBridge-dev',
    urlSuffix: 'amazonaws.com',
    resources,
  };
}

function valuesOf(id: string, type: string): ResourceValues {
  const name = `dev-${id}`;
  switch (type) {
    case 'AWS::DynamoDB::Table':
      return { ref: name, attributes: { Arn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}` } };
    case 'AWS::SQS::Queue':
      return {
        ref: `http://127.0.0.1:1/${ACCOUNT}/${name}`,
        attributes: { Arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`, QueueName: name },
      };
    case 'AWS::SecretsManager::Secret':
      return { ref: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${name}-AbCdEf`, attributes: {} };
    case 'AWS::Logs::LogGroup':
      return { ref: name, attributes: { Arn: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}:*` } };
    default:
      return { ref: name, attributes: { Arn: `arn:aws:${type.split('::')[1]!.toLowerCase()}:${REGION}:${ACCOUNT}:${name}` } };
  }
}

let template: CfnTemplate;
let ctx: ResolveContext;
let tableArn: string;
let digestQueueArn: string;

/** The digest worker's receive from its own queue: allowed by its role, outside DynamoDB. */
function receiveFromDigestQueue(): RecordedAwsCall {
  return { principal: 'digest', service: 'sqs', action: 'sqs:ReceiveMessage', resources: [digestQueueArn], context: {} };
}
let ingestRoleId: string;
let digestRoleId: string;

beforeAll(() => {
  const app = synthApp();
  template = app.template.toJSON() as CfnTemplate;
  ctx = localValues(template);
  tableArn = ctx.resources[logicalId(app.template, 'AWS::DynamoDB::Table', 'Table')]!.attributes.Arn!;
  digestQueueArn = ctx.resources[logicalId(app.template, 'AWS::SQS::Queue', 'DigestQueue')]!.attributes.Arn!;
  ingestRoleId = logicalId(app.template, 'AWS::IAM::Role', 'WebhookIngestRole');
  digestRoleId = logicalId(app.template, 'AWS::IAM::Role', 'DigestWorkerDigestRole');
});

/** The dedup record ingest writes (shared/adapters/dynamo-delivery-store.ts keys it `delivery#<event id>`). */
function putDedupRecord(key: string): RecordedAwsCall {
  return {
    principal: 'ingest',
    service: 'dynamodb',
    action: 'dynamodb:PutItem',
    resources: [tableArn],
    context: { 'dynamodb:LeadingKeys': [key] },
  };
}

function withoutStatement(source: CfnTemplate, roleId: string, sid: string): CfnTemplate {
  const copy = structuredClone(source);
  let removed = 0;
  for (const resource of Object.values(copy.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const properties = resource.Properties as { Roles: { Ref: string }[]; PolicyDocument: { Statement: { Sid?: string }[] } };
    if (!properties.Roles.some((role) => role.Ref === roleId)) continue;
    const before = properties.PolicyDocument.Statement.length;
    properties.PolicyDocument.Statement = properties.PolicyDocument.Statement.filter((statement) => statement.Sid !== sid);
    removed += before - properties.PolicyDocument.Statement.length;
  }
  if (removed !== 1) throw new Error(`expected to remove one statement ${sid} of ${roleId}, removed ${removed}`);
  return copy;
}

describe('rolePolicies', () => {
  it("collects the role's policy statements with their intrinsics resolved", () => {
    const policies = rolePolicies(template, ingestRoleId, ctx);
    expect(policies.roleLogicalId).toBe(ingestRoleId);
    expect(policies.statements.map((source) => source.sid).sort()).toEqual([
      'DeliveryDedupRecords',
      'EnqueueEvents',
      'QuarantineDeliveries',
      'ReadConnectionSecrets',
      'ReadConnections',
      'ReadSigningSecrets',
      'WriteOwnLogs',
    ]);
    const enqueue = policies.statements.find((source) => source.sid === 'EnqueueEvents')!;
    expect(enqueue.statement).toEqual({ Action: 'sqs:SendMessage', Effect: 'Allow', Resource: digestQueueArn, Sid: 'EnqueueEvents' });
    expect(enqueue.policyLogicalId).toMatch(/^WebhookIngestRoleDefaultPolicy/);
  });

  it("includes the role's inline policies and managed policies of the template", () => {
    const copy = structuredClone(template);
    copy.Resources[ingestRoleId]!.Properties!.Policies = [
      {
        PolicyName: 'Extra',
        PolicyDocument: { Statement: { Sid: 'InlineOne', Effect: 'Allow', Action: 'sqs:GetQueueUrl', Resource: '*' } },
      },
    ];
    copy.Resources.Managed = {
      Type: 'AWS::IAM::ManagedPolicy',
      Properties: { PolicyDocument: { Statement: [{ Sid: 'ManagedOne', Effect: 'Allow', Action: 'sqs:ListQueues', Resource: '*' }] } },
    };
    copy.Resources[ingestRoleId]!.Properties!.ManagedPolicyArns = [{ Ref: 'Managed' }];
    const sources = rolePolicies(copy, ingestRoleId, ctx).statements;
    expect(sources.find((source) => source.sid === 'InlineOne')?.policyLogicalId).toBe(`${ingestRoleId}.Policies.Extra`);
    expect(sources.find((source) => source.sid === 'ManagedOne')?.policyLogicalId).toBe('Managed');
  });

  it('refuses what it cannot read offline, naming it', () => {
    expect(() => rolePolicies(template, 'NoSuchRole', ctx)).toThrow('NoSuchRole is not in the template, not an AWS::IAM::Role');
    const copy = structuredClone(template);
    copy.Resources[ingestRoleId]!.Properties!.ManagedPolicyArns = ['arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'];
    expect(() => rolePolicies(copy, ingestRoleId, ctx)).toThrow(/AWSLambdaBasicExecutionRole.*not in the template/);
    expect(() => rolePolicies(template, ingestRoleId, { ...ctx, resources: {} })).toThrow(/Fn::GetAtt .*: no local value for logical id/);
  });
});

describe('checkCalls on the synthesized roles', () => {
  let ingest: RolePolicies;
  let digest: RolePolicies;
  beforeAll(() => {
    ingest = rolePolicies(template, ingestRoleId, ctx);
    digest = rolePolicies(template, digestRoleId, ctx);
  });

  it('allows the dedup record ingest writes, naming the statement that allows it', async () => {
    const [verdict] = await checkCalls(ingest, [putDedupRecord(`${TABLE.prefixes.delivery}evt_123`)]);
    expect(verdict).toMatchObject({ allowed: true, kind: 'allowed' });
    expect(verdict!.explanation).toContain('allowed by Sid DeliveryDedupRecords');
  });

  it('denies the same write with a key of another prefix, naming the call and the condition that failed', async () => {
    const [verdict] = await checkCalls(ingest, [putDedupRecord(`${TABLE.prefixes.digest}evt_123`)]);
    expect(verdict).toMatchObject({ allowed: false, kind: 'implicit_deny' });
    const message = describeDenial(verdict!, ingest);
    expect(message).toContain(
      `ingest: dynamodb:PutItem on ${tableArn} with dynamodb:LeadingKeys=digest#evt_123 is not allowed by role ${ingestRoleId}`,
    );
    expect(message).toContain(
      'no statement allows it (closest: Sid DeliveryDedupRecords (WebhookIngestRoleDefaultPolicy565EB63A) — condition dynamodb:LeadingKeys ForAllValues:StringLike ["delivery#*","t#*#delivery#*"] not met (unmatched: digest#evt_123))',
    );
  });

  it('denies a call once its statement is removed from the synthesized template, naming the call', async () => {
    const enqueue: RecordedAwsCall = {
      principal: 'ingest',
      service: 'sqs',
      action: 'sqs:SendMessage',
      resources: [digestQueueArn],
      context: {},
    };
    expect((await checkCalls(ingest, [enqueue]))[0]).toMatchObject({ allowed: true });

    const trimmed = rolePolicies(withoutStatement(template, ingestRoleId, 'EnqueueEvents'), ingestRoleId, ctx);
    const [verdict] = await checkCalls(trimmed, [enqueue]);
    expect(verdict).toMatchObject({ allowed: false, kind: 'implicit_deny' });
    const message = describeDenial(verdict!, trimmed);
    expect(message).toContain(`ingest: sqs:SendMessage on ${digestQueueArn} is not allowed by role ${ingestRoleId}`);
    // The closest statement is the DLQ one: same action, another queue.
    expect(message).toMatch(
      /closest: Sid QuarantineDeliveries \(.*\) — its resources \["arn:aws:sqs:.*DigestDlq.*"\] do not include this resource/,
    );
    expect(message).not.toContain('EnqueueEvents,');
  });

  it('checks every leading key of a call: one key of a foreign prefix denies it', async () => {
    const update = (keys: string[]): RecordedAwsCall => ({
      principal: 'digest',
      service: 'dynamodb',
      action: 'dynamodb:UpdateItem',
      resources: [tableArn],
      context: { 'dynamodb:LeadingKeys': keys },
    });
    const [claim, paced, mixed] = await checkCalls(digest, [
      update(['digest#e1']),
      update(['pace#C1']),
      update(['digest#e1', 'delivery#e1']),
    ]);
    expect(claim!.allowed).toBe(true);
    expect(paced!.allowed).toBe(true);
    expect(mixed!.allowed).toBe(false);
    expect(describeDenial(mixed!, digest)).toContain('dynamodb:LeadingKeys=digest#e1,delivery#e1 is not allowed');
  });

  it('gives each call its own verdict: calls alike share an evaluation, a call with another key is evaluated apart', async () => {
    const first = { ...putDedupRecord(`${TABLE.prefixes.delivery}evt_1`), principal: 'ingest-1' };
    const again = { ...putDedupRecord(`${TABLE.prefixes.delivery}evt_1`), principal: 'ingest-2' };
    const foreign = putDedupRecord(`${TABLE.prefixes.digest}evt_1`);
    const verdicts = await checkCalls(ingest, [first, again, foreign]);
    expect(verdicts.map((verdict) => [verdict.call.principal, verdict.allowed])).toEqual([
      ['ingest-1', true],
      ['ingest-2', true],
      ['ingest', false],
    ]);
    expect(describeDenial(verdicts[2]!, ingest)).toContain('dynamodb:LeadingKeys=digest#evt_1 is not allowed');
  });

  it('names a statement without a Sid by its position in its policy', async () => {
    const receive = receiveFromDigestQueue();
    const [verdict] = await checkCalls(digest, [receive]);
    expect(verdict!.allowed).toBe(true);
    expect(verdict!.explanation).toMatch(/allowed by statement #\d+ of DigestWorkerDigestRoleDefaultPolicy/);
  });

  it('reports an explicit deny and the statement that denies', async () => {
    const denying: RolePolicies = {
      ...ingest,
      statements: [
        ...ingest.statements,
        {
          policyLogicalId: 'Guardrail',
          sid: 'NoEnqueue',
          statement: { Sid: 'NoEnqueue', Effect: 'Deny', Action: 'sqs:SendMessage', Resource: '*' },
        },
      ],
    };
    const enqueue: RecordedAwsCall = {
      principal: 'ingest',
      service: 'sqs',
      action: 'sqs:SendMessage',
      resources: [digestQueueArn],
      context: {},
    };
    const [verdict] = await checkCalls(denying, [enqueue]);
    expect(verdict).toMatchObject({ allowed: false, kind: 'explicit_deny' });
    expect(describeDenial(verdict!, denying)).toContain('explicitly denied by Sid NoEnqueue (Guardrail) — denies it');
  });

  it('refuses a call whose resource the recorder could not tell', async () => {
    const unknown: RecordedAwsCall = { principal: 'digest', service: 'sqs', action: 'sqs:ListQueues', resources: [], context: {} };
    const [verdict] = await checkCalls(digest, [unknown]);
    expect(verdict).toMatchObject({ allowed: false, kind: 'implicit_deny' });
    expect(describeDenial(verdict!, digest)).toContain('digest: sqs:ListQueues is not allowed by role');
    expect(describeDenial(verdict!, digest)).toContain('could not tell which resource');
  });
});

describe("checkCalls under a tenant's session policy (role ∩ tenantSessionPolicy)", () => {
  const clientA: Tenant = { kind: 'connection', connectionId: 'client-a' };
  const clientB: Tenant = { kind: 'connection', connectionId: 'client-b' };
  let digest: RolePolicies;
  beforeAll(() => {
    digest = rolePolicies(template, digestRoleId, ctx);
  });

  const session = (...tenants: Tenant[]) => ({
    label: `tenant ${tenants.map((t) => (t.kind === 'stack' ? 'stack' : t.connectionId)).join('+')}`,
    document: tenantSessionPolicy(tenants, tableArn),
  });
  // The digest role grants GetItem and UpdateItem on digest claims (no function queries the table).
  const read = (action: 'dynamodb:GetItem' | 'dynamodb:UpdateItem', key: string): RecordedAwsCall => ({
    principal: 'digest',
    service: 'dynamodb',
    action,
    resources: [tableArn],
    context: { 'dynamodb:LeadingKeys': [key] },
  });
  const digestOf = (tenant: Tenant) => tenantKey(tenant, `${TABLE.prefixes.digest}evt_1`);

  it("denies a read or write of another tenant's digest claim and allows the same call under that tenant's own policy", async () => {
    for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem'] as const) {
      // The role alone allows every tenant's digest (t#*#digest#*): only the session policy tells them apart.
      expect((await checkCalls(digest, [read(action, digestOf(clientB))]))[0]!.allowed).toBe(true);
      const [crossTenant] = await checkCalls(digest, [read(action, digestOf(clientB))], session(clientA));
      expect(crossTenant).toMatchObject({ allowed: false, kind: 'explicit_deny' });
      expect(describeDenial(crossTenant!, digest)).toContain(
        `digest: ${action} on ${tableArn} with dynamodb:LeadingKeys=t#client-b#digest#evt_1 is not allowed by role ${digestRoleId}`,
      );
      expect(describeDenial(crossTenant!, digest)).toContain('under the session policy of tenant client-a');
      expect(describeDenial(crossTenant!, digest)).toContain('explicitly denied by Sid NoOtherTenantItems (SessionPolicy) — denies it');
      const [own] = await checkCalls(digest, [read(action, digestOf(clientB))], session(clientB));
      expect(own).toMatchObject({ allowed: true, kind: 'allowed' });
    }
  });

  it("keeps the stack's own tenant to the bare keys: every t# key is denied", async () => {
    const [bare, connection] = await checkCalls(
      digest,
      [read('dynamodb:GetItem', digestOf(STACK_TENANT)), read('dynamodb:GetItem', digestOf(clientA))],
      session(STACK_TENANT),
    );
    expect(bare!.allowed).toBe(true);
    expect(connection).toMatchObject({ allowed: false, kind: 'explicit_deny' });
  });

  it("allows the keys that are no tenant's data, and whatever the role allows outside DynamoDB", async () => {
    const receive = receiveFromDigestQueue();
    const verdicts = await checkCalls(digest, [read('dynamodb:GetItem', `${TABLE.prefixes.pace}C1`), receive], session(clientA));
    expect(verdicts.map((verdict) => verdict.allowed)).toEqual([true, true]);
  });

  it("allows under the union of several tenants' policies what either allows, and nothing of a third", async () => {
    const clientC: Tenant = { kind: 'connection', connectionId: 'client-c' };
    const verdicts = await checkCalls(
      digest,
      [
        read('dynamodb:GetItem', digestOf(clientA)),
        read('dynamodb:GetItem', digestOf(clientB)),
        read('dynamodb:GetItem', digestOf(clientC)),
      ],
      session(clientA, clientB),
    );
    expect(verdicts.map((verdict) => verdict.allowed)).toEqual([true, true, false]);
  });

  it('does not let a connection id that extends another one through', async () => {
    const [verdict] = await checkCalls(digest, [read('dynamodb:GetItem', `t#client-ab#digest#evt_1`)], session(clientA));
    expect(verdict!.allowed).toBe(false);
  });
});

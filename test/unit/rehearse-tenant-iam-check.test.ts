/**
 * The rehearsal's tenant-scoped IAM check: which tenants an invocation served (from its input), and its
 * recorded calls evaluated under the role and that tenant's session policy, a cross-tenant read denied.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedAwsCall } from '../../local/rehearse/aws-call-recorder';
import type { RolePolicies } from '../../local/rehearse/iam-check';
import { tenantCallsCheck, tenantsServedBy } from '../../local/rehearse/tenant-iam-check';
import { Store } from '../../infra/store';
import { QUEUE_MESSAGE_KINDS, TABLE } from '../../shared/contracts';
import { STACK_TENANT, type Tenant } from '../../shared/tenancy';

const TABLE_ARN = 'arn:aws:dynamodb:us-east-1:000000000000:table/dev-Table';
const clientA: Tenant = { kind: 'connection', connectionId: 'client-a' };
const clientB: Tenant = { kind: 'connection', connectionId: 'client-b' };

const record = (body: unknown, group?: string) => ({
  body: JSON.stringify(body),
  attributes: group === undefined ? {} : { MessageGroupId: group },
});
const batch = (...records: unknown[]) => ({ Records: records });

describe('tenantsServedBy', () => {
  it("names a webhook delivery's tenant by its path", () => {
    expect(tenantsServedBy({ rawPath: '/webhook' })).toEqual([STACK_TENANT]);
    expect(tenantsServedBy({ rawPath: '/webhook/client-a' })).toEqual([clientA]);
    expect(tenantsServedBy({ rawPath: '/webhook/Not An Id' })).toBeUndefined();
    expect(tenantsServedBy({ rawPath: '/slack/install' })).toBeUndefined();
  });

  it("names an SQS batch's tenants by its records' MessageGroupId, each once", () => {
    expect(tenantsServedBy(batch(record({}, 'client-a'), record({}, 'client-a')))).toEqual([clientA]);
    expect(tenantsServedBy(batch(record({}, 'client-a'), record({}, 'stack'), record({}, 'client-b')))).toEqual([
      clientA,
      STACK_TENANT,
      clientB,
    ]);
    // One record that names no tenant: the batch is not attributed.
    expect(tenantsServedBy(batch(record({}, 'client-a'), record({})))).toBeUndefined();
  });

  it('leaves the sweeps that serve every tenant unattributed, whatever their group', () => {
    expect(tenantsServedBy(batch(record({ kind: QUEUE_MESSAGE_KINDS.weeklySweep }, 'stack')))).toBeUndefined();
    expect(tenantsServedBy(batch(record({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp })))).toBeUndefined();
  });

  it('takes a deferred Slack command or Home publish tenants from the message the Slack function wrote', () => {
    const command = { kind: QUEUE_MESSAGE_KINDS.slackCommand, context: { tenants: [STACK_TENANT, clientB] } };
    expect(tenantsServedBy(batch(record(command)))).toEqual([STACK_TENANT, clientB]);
    expect(tenantsServedBy(batch(record({ kind: QUEUE_MESSAGE_KINDS.slackCommand, context: {} })))).toEqual([STACK_TENANT]);
    expect(tenantsServedBy(batch(record({ kind: QUEUE_MESSAGE_KINDS.slackHome, tenants: [clientA] })))).toEqual([clientA]);
  });
});

describe('tenantCallsCheck', () => {
  // The grant the digest role has on claims (infra/digest-worker.ts): every tenant's, `t#*#digest#*` included.
  const policies: RolePolicies = {
    roleLogicalId: 'DigestRole',
    statements: [
      {
        policyLogicalId: 'DigestRolePolicy',
        sid: 'DigestClaims',
        statement: {
          Sid: 'DigestClaims',
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
          Resource: TABLE_ARN,
          Condition: Store.leadingKeys(TABLE.prefixes.digest),
        },
      },
    ],
  };
  let invocations = 0;
  const invocation = (event: unknown) => ({ id: ++invocations, event });
  const getItem = (key: string, served?: { id: number; event: unknown }): RecordedAwsCall => ({
    principal: 'DigestFunction',
    service: 'dynamodb',
    action: 'dynamodb:GetItem',
    resources: [TABLE_ARN],
    context: { 'dynamodb:LeadingKeys': [key] },
    ...(served ? { invocation: served } : {}),
  });

  it('passes when each invocation stayed in its tenant, counting the calls evaluated per tenant', async () => {
    const ofA = invocation(batch(record({}, 'client-a')));
    const mixed = invocation(batch(record({}, 'client-a'), record({}, 'client-b')));
    const check = await tenantCallsCheck(
      'DigestFunction',
      policies,
      [
        getItem('t#client-a#digest#e1', ofA),
        getItem('t#client-a#digest#e2', mixed),
        getItem('t#client-b#digest#e3', mixed),
        getItem('digest#init'),
      ],
      TABLE_ARN,
    );
    expect(check).toMatchObject({ ok: true, detail: '' });
    expect(check.name).toContain('calls per tenant: client-a: 3, client-b: 2; 1 serving no one tenant');
  });

  it("fails on a read of another tenant's claim, showing the call, the tenant and the key", async () => {
    const ofA = invocation(batch(record({}, 'client-a')));
    const check = await tenantCallsCheck('DigestFunction', policies, [getItem('t#client-b#digest#e9', ofA)], TABLE_ARN);
    expect(check.ok).toBe(false);
    expect(check.detail).toContain(
      `DigestFunction: dynamodb:GetItem on ${TABLE_ARN} with dynamodb:LeadingKeys=t#client-b#digest#e9 is not allowed by role DigestRole`,
    );
    expect(check.detail).toContain('under the session policy of tenant client-a');
  });

  it("fails when the stack's own webhook work touches a connection's keys", async () => {
    const ofStack = invocation({ rawPath: '/webhook' });
    const check = await tenantCallsCheck('DigestFunction', policies, [getItem('t#client-a#digest#e1', ofStack)], TABLE_ARN);
    expect(check.ok).toBe(false);
    expect(check.detail).toContain('under the session policy of tenant stack');
  });
});

/**
 * Which tenants one function invocation served, read from its input the way the function reads it: a
 * webhook delivery names its tenant by its path (`/webhook` the stack's, `/webhook/<id>` a connection's);
 * an SQS record by its MessageGroupId (ingest sends each event with its tenant as the group), or, for a
 * deferred Slack command or Home publish, by the tenants the Slack function decided and put on the message.
 * Work that serves every tenant (the weekly sweep, the quiet-hours catch-up), and input naming none, is
 * not attributed: its calls are checked against the role alone.
 *
 * Then each function's calls made for known tenants are evaluated under the role and those tenants' session
 * policy (shared/tenancy.ts), as IAM would with tenant-scoped credentials.
 */
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import type { RecordedAwsCall } from './aws-call-recorder';
import { checkCalls, describeDenial, type RolePolicies } from './iam-check';
import type { RehearsedStack } from './rehearsed-stack';
import { webhookTargetOf } from '../../shared/connections/model';
import { parseTenants } from '../../shared/slack-app/tenant-scope';
import { STACK_TENANT, tenantLabel, tenantOfLabel, tenantSessionPolicy, type Tenant } from '../../shared/tenancy';
import { asRecord, isRecord, parseJsonOrUndefined } from '../../shared/util';

/** The tenants the invocation of `event` served, each once; undefined when its input does not say. */
export function tenantsServedBy(event: unknown): Tenant[] | undefined {
  if (!isRecord(event)) return undefined;
  if (Array.isArray(event.Records)) return tenantsOfRecords(event.Records);
  if (typeof event.rawPath === 'string') return tenantsOfPath(event.rawPath);
  return undefined;
}

function tenantsOfPath(path: string): Tenant[] | undefined {
  const target = webhookTargetOf(path);
  if (target.kind === 'default') return [STACK_TENANT];
  return target.kind === 'connection' ? [{ kind: 'connection', connectionId: target.id }] : undefined;
}

function tenantsOfRecords(records: unknown[]): Tenant[] | undefined {
  const perRecord = records.map(tenantsOfRecord);
  if (perRecord.length === 0 || perRecord.some((tenants) => tenants === undefined)) return undefined;
  const byLabel = new Map(perRecord.flatMap((tenants) => tenants!).map((tenant) => [tenantLabel(tenant), tenant]));
  return [...byLabel.values()];
}

/** Every tenant's: no one tenant's session could do it. */
const EVERY_TENANT_KINDS: readonly string[] = [QUEUE_MESSAGE_KINDS.weeklySweep, QUEUE_MESSAGE_KINDS.quietCatchUp];

function tenantsOfRecord(record: unknown): Tenant[] | undefined {
  const { body, attributes } = asRecord(record);
  const message = asRecord(parseJsonOrUndefined(body));
  const kind = message.kind;
  if (typeof kind === 'string' && EVERY_TENANT_KINDS.includes(kind)) return undefined;
  // A message without tenants is a stage without connections: the stack's alone (shared/slack-app/ports.ts).
  if (kind === QUEUE_MESSAGE_KINDS.slackCommand) return parseTenants(asRecord(message.context).tenants ?? [STACK_TENANT]);
  if (kind === QUEUE_MESSAGE_KINDS.slackHome) return parseTenants(message.tenants ?? [STACK_TENANT]);
  const group = asRecord(attributes).MessageGroupId;
  return typeof group === 'string' ? [tenantOfLabel(group)] : undefined;
}

// -- the check ---------------------------------------------------------------------------------------

/** The one table's ARN, as the recorder names it in a call's resources. */
export function tableArnOf(stack: RehearsedStack): string {
  const [tableId] = Object.entries(stack.stack.template.Resources).find(([, resource]) => resource.Type === 'AWS::DynamoDB::Table') ?? [];
  const arn = tableId === undefined ? undefined : stack.context.resources[tableId]?.attributes['Arn'];
  if (arn === undefined) throw new Error('the rehearsed template has no DynamoDB table with a local ARN');
  return arn;
}

/**
 * A function's calls made for invocations that served known tenants, each evaluated under role ∩ those
 * tenants' session policy (their union for an invocation that served several). Its name counts the calls
 * evaluated per tenant, so a reader sees it checked something; a denial shows the call, the tenant and the key.
 */
export async function tenantCallsCheck(
  logicalId: string,
  policies: RolePolicies,
  calls: readonly RecordedAwsCall[],
  tableArn: string,
): Promise<{ name: string; ok: boolean; detail: string }> {
  const byInvocation = new Map<number, { tenants: Tenant[]; calls: RecordedAwsCall[] }>();
  let unattributed = 0;
  for (const call of calls) {
    const tenants = call.invocation && tenantsServedBy(call.invocation.event);
    if (!call.invocation || !tenants) unattributed += 1;
    else byInvocation.set(call.invocation.id, { tenants, calls: [...(byInvocation.get(call.invocation.id)?.calls ?? []), call] });
  }
  const perTenant = new Map<string, number>();
  const denials: string[] = [];
  for (const { tenants, calls: served } of byInvocation.values()) {
    const label = `tenant ${tenants.map(tenantLabel).join(' + ')}`;
    for (const tenant of tenants) perTenant.set(tenantLabel(tenant), (perTenant.get(tenantLabel(tenant)) ?? 0) + served.length);
    const verdicts = await checkCalls(policies, [...served], { label, document: tenantSessionPolicy(tenants, tableArn) });
    denials.push(...verdicts.filter((verdict) => !verdict.allowed).map((verdict) => describeDenial(verdict, policies)));
  }
  const counts = [...perTenant].map(([tenant, count]) => `${tenant}: ${count}`).join(', ') || 'none';
  return {
    name: `IAM: every AWS call of ${logicalId} made for a tenant stays in its keys under that tenant's session policy (calls per tenant: ${counts}; ${unattributed} serving no one tenant, checked against the role only)`,
    ok: denials.length === 0,
    detail: denials.slice(0, 5).join('\n'),
  };
}

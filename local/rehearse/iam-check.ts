/**
 * Checks the AWS calls a function made during the deploy rehearsal against its role's identity
 * policies from the synthesized template, with an offline IAM evaluator (@cloud-copilot/iam-simulate):
 * the action, each ARN and the condition keys (`dynamodb:LeadingKeys` as a multi-valued key). A denial
 * is described so the fix is obvious: the call, and the statement that is missing or the condition
 * that failed. With a session policy (a tenant's, shared/tenancy.ts), a call is evaluated as IAM evaluates
 * a session's: allowed only when both the role and the session policy allow it.
 */
import {
  isConditionKeyArray,
  runSimulation,
  typeForContextKey,
  type ConditionExplain,
  type StatementExplain,
} from '@cloud-copilot/iam-simulate';
import type { CfnTemplate } from './assembly';
import type { RecordedAwsCall } from './aws-call-recorder';
import { resolveIntrinsics, type ResolveContext } from './intrinsics';
import { asArray, asRecord, isRecord } from '../../shared/util';

export interface PolicyStatementSource {
  /** The AWS::IAM::Policy / ManagedPolicy logical id, or `<role>.Policies.<PolicyName>` for an inline policy. */
  policyLogicalId: string;
  sid: string | undefined;
  /** The statement with intrinsics resolved. */
  statement: unknown;
}

export interface RolePolicies {
  roleLogicalId: string;
  statements: PolicyStatementSource[];
}

export type VerdictKind = 'allowed' | 'implicit_deny' | 'explicit_deny';

/** The evaluation of one of a call's resources. */
export interface ResourceFinding {
  resource: string;
  kind: VerdictKind;
  /** Statements that allowed (allowed), denied (explicit_deny), or came closest (implicit_deny), with why. */
  statements: { policyLogicalId: string; label: string; reason: string }[];
}

/** The session policy the credentials were issued with, and whose they are (e.g. `tenant client-a`). */
export interface SessionPolicy {
  label: string;
  document: unknown;
}

export interface CallVerdict {
  call: RecordedAwsCall;
  /** The session policy it was evaluated under, if any. */
  session?: SessionPolicy;
  allowed: boolean;
  kind: VerdictKind;
  explanation: string;
  findings: ResourceFinding[];
}

// -- the role's policies ----------------------------------------------------------------------------

/**
 * Identity policies attached to a role: AWS::IAM::Policy / ManagedPolicy resources whose Roles include
 * {Ref: role}, managed policies the role lists by Ref, and the role's inline Policies; resolved with
 * resolveIntrinsics. A managed policy ARN from outside the template, or a permissions boundary, cannot
 * be read offline and throws.
 */
export function rolePolicies(template: CfnTemplate, roleLogicalId: string, ctx: ResolveContext): RolePolicies {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') {
    throw new Error(`rolePolicies: ${roleLogicalId} is ${role ? `a ${role.Type}` : 'not in the template'}, not an AWS::IAM::Role`);
  }
  const props = role.Properties ?? {};
  if (props.PermissionsBoundary !== undefined)
    throw new Error(`role ${roleLogicalId} has a PermissionsBoundary, which the rehearsal's IAM check does not evaluate`);
  const inline = asArray(props.Policies).map((policy, index) => {
    const { PolicyName: name, PolicyDocument: document } = asRecord(policy);
    return [`${roleLogicalId}.Policies.${typeof name === 'string' ? name : index}`, document] as const;
  });
  const listed = asArray(props.ManagedPolicyArns).map((entry) => {
    const id = isRecord(entry) && typeof entry.Ref === 'string' ? entry.Ref : undefined;
    if (id !== undefined && template.Resources[id]?.Type === 'AWS::IAM::ManagedPolicy') return id;
    throw new Error(
      `role ${roleLogicalId} lists managed policy ${JSON.stringify(entry)}, which is not in the template: the rehearsal cannot read it offline`,
    );
  });
  const attached = Object.entries(template.Resources)
    .filter(([id, { Type, Properties }]) => {
      if (Type !== 'AWS::IAM::Policy' && Type !== 'AWS::IAM::ManagedPolicy') return false;
      return listed.includes(id) || asArray(asRecord(Properties).Roles).some((role) => isRecord(role) && role.Ref === roleLogicalId);
    })
    .map(([id, resource]) => [id, asRecord(resource.Properties).PolicyDocument] as const);
  return {
    roleLogicalId,
    statements: [...inline, ...attached].flatMap(([id, document]) => statementsOf(id, resolveIntrinsics(document, ctx))),
  };
}

function statementsOf(policyLogicalId: string, document: unknown): PolicyStatementSource[] {
  const statement = asRecord(document).Statement;
  if (statement === undefined) throw new Error(`policy ${policyLogicalId} has no PolicyDocument.Statement`);
  return (Array.isArray(statement) ? statement : [statement]).map((entry: unknown) => {
    const sid = asRecord(entry).Sid;
    return { policyLogicalId, sid: typeof sid === 'string' ? sid : undefined, statement: entry };
  });
}

// -- evaluation ---------------------------------------------------------------------------------------

/**
 * Evaluates each call (every resource it touches) against the role's policies, and the session policy when given, in order.
 * Calls alike (action, resources, condition keys) are evaluated once: a rehearsal repeats a few kinds of call hundreds of times.
 */
export async function checkCalls(policies: RolePolicies, calls: RecordedAwsCall[], session?: SessionPolicy): Promise<CallVerdict[]> {
  const evaluated = new Map<string, CallVerdict>();
  const verdicts: CallVerdict[] = [];
  for (const call of calls) {
    const key = JSON.stringify([call.action, call.resources, Object.entries(call.context).sort(([a], [b]) => a.localeCompare(b))]);
    const verdict = evaluated.get(key) ?? (await checkCall(policies, call, session));
    evaluated.set(key, verdict);
    verdicts.push({ ...verdict, call, ...(session ? { session } : {}) });
  }
  return verdicts;
}

const KIND_ORDER: VerdictKind[] = ['allowed', 'implicit_deny', 'explicit_deny'];

async function checkCall(policies: RolePolicies, call: RecordedAwsCall, session: SessionPolicy | undefined): Promise<CallVerdict> {
  if (call.resources.length === 0) {
    const explanation = `the recorder could not tell which resource ${call.action} touches, so it cannot be checked`;
    return { call, allowed: false, kind: 'implicit_deny', explanation, findings: [] };
  }
  const contextVariables = await simulationContext(call.context);
  const findings: ResourceFinding[] = [];
  for (const resource of call.resources) findings.push(await evaluate(policies, session, call, resource, contextVariables));
  const kind = findings
    .map((finding) => finding.kind)
    .reduce((worst, next) => (KIND_ORDER.indexOf(next) > KIND_ORDER.indexOf(worst) ? next : worst));
  const explanation = findings.map((finding) => `${finding.resource}: ${summary(finding)}`).join('; ');
  return { call, allowed: kind === 'allowed', kind, explanation, findings };
}

/** Multi-valued keys (dynamodb:LeadingKeys) stay lists; single-valued ones are passed as their one value. */
async function simulationContext(context: Record<string, string[]>): Promise<Record<string, string | string[]>> {
  const out: Record<string, string | string[]> = {};
  for (const [key, values] of Object.entries(context)) {
    const multiValued = await typeForContextKey(key).then(isConditionKeyArray, () => values.length !== 1);
    out[key] = multiValued ? values : values[0]!;
  }
  return out;
}

async function evaluate(
  policies: RolePolicies,
  session: SessionPolicy | undefined,
  call: RecordedAwsCall,
  resource: string,
  contextVariables: Record<string, string | string[]>,
): Promise<ResourceFinding> {
  const accountId = resource.split(':')[4] || '000000000000';
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${accountId}:role/${policies.roleLogicalId}`,
        action: call.action,
        resource: { resource, accountId },
        contextVariables,
      },
      identityPolicies: identityPolicies(policies),
      sessionPolicy: session?.document,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    { simulationMode: 'Strict' },
  );
  if (result.resultType === 'error') {
    // Not a verdict: the evaluator rejected the policies or the request (e.g. an ARN of the wrong type for the action).
    throw new Error(
      `IAM check of ${call.principal}: ${call.action} on ${resource} could not run: the evaluator rejected it (${result.errors.message}): ${JSON.stringify(result.errors)}`,
    );
  }
  const analyses = result.resultType === 'single' ? [result.result] : result.results;
  const identity = analyses[0]?.analysis.identityAnalysis;
  const sessionAnalysis = analyses[0]?.analysis.sessionAnalysis;
  const kind = kindOf(result.overallResult);
  const label = (policyId: string, explain: StatementExplain) => statementLabel(policies, policyId, explain);
  // The evaluator names the session policy `SessionPolicy`, which the summary shows beside the Sid.
  const sessionLabel = (_policyId: string, explain: StatementExplain) => `Sid ${explain.identifier}`;
  if (kind === 'implicit_deny') {
    // The role allowed it, so the session policy is what lacks a statement.
    const roleAllowed = identity?.result === 'Allowed' && sessionAnalysis !== undefined;
    const unmatched = (roleAllowed ? sessionAnalysis : identity)?.unmatchedStatements ?? [];
    return { resource, kind, statements: closestStatements(unmatched, roleAllowed ? sessionLabel : label) };
  }
  const reason = kind === 'allowed' ? 'allows it' : 'denies it';
  const fromRole = (kind === 'allowed' ? identity?.allowStatements : identity?.denyStatements) ?? [];
  const fromSession = kind === 'allowed' ? [] : (sessionAnalysis?.denyStatements ?? []);
  const statements = [
    ...fromRole.map((s) => ({ policyLogicalId: s.policyId, label: label(s.policyId, s.explain), reason })),
    ...fromSession.map((s) => ({ policyLogicalId: s.policyId, label: sessionLabel(s.policyId, s.explain), reason })),
  ];
  return { resource, kind, statements };
}

/** One identity policy per template policy, so the evaluator's policyId names the template resource. */
function identityPolicies(policies: RolePolicies): { name: string; policy: unknown }[] {
  const byPolicy = new Map<string, unknown[]>();
  for (const source of policies.statements)
    byPolicy.set(source.policyLogicalId, [...(byPolicy.get(source.policyLogicalId) ?? []), source.statement]);
  return [...byPolicy].map(([name, statements]) => ({ name, policy: { Version: '2012-10-17', Statement: statements } }));
}

function kindOf(result: string): VerdictKind {
  if (result === 'Allowed') return 'allowed';
  return result === 'ExplicitlyDenied' ? 'explicit_deny' : 'implicit_deny';
}

/** `Sid X` when the statement has one, else `statement #n of <policy>` (n counted from 1 within that policy). */
function statementLabel(policies: RolePolicies, policyId: string, explain: StatementExplain): string {
  const bySid = policies.statements.some((source) => source.policyLogicalId === policyId && source.sid === explain.identifier);
  // Without a Sid the evaluator identifies a statement by its 1-based position.
  return bySid ? `Sid ${explain.identifier}` : `statement #${explain.identifier} of ${policyId}`;
}

/**
 * The statements that came closest to allowing the call, best first: action and resource match but a
 * condition failed; action matches but not the resource; the resource matches but not the action.
 */
function closestStatements(
  unmatched: { policyId: string; explain: StatementExplain }[],
  label: (policyId: string, explain: StatementExplain) => string,
): ResourceFinding['statements'] {
  const allow = unmatched.filter((s) => s.explain.effect === 'Allow');
  const tiers = [
    allow.filter((s) => s.explain.actionMatch && s.explain.resourceMatch && !s.explain.conditionMatch),
    allow.filter((s) => s.explain.actionMatch && !s.explain.resourceMatch),
    allow.filter((s) => !s.explain.actionMatch && s.explain.resourceMatch),
  ];
  const closest = tiers.find((tier) => tier.length > 0) ?? [];
  return closest.map((s) => ({ policyLogicalId: s.policyId, label: label(s.policyId, s.explain), reason: mismatchReason(s.explain) }));
}

function mismatchReason(explain: StatementExplain): string {
  if (!explain.actionMatch) return `its actions ${listOf(explain.actions)} do not include this action`;
  if (!explain.resourceMatch) return `its resources ${listOf(explain.resources)} do not include this resource`;
  const failed = (explain.conditions ?? []).filter((condition) => !condition.matches);
  return failed.map(conditionText).join('; ') || 'a condition not met';
}

function conditionText(condition: ConditionExplain): string {
  const values = (Array.isArray(condition.values) ? condition.values : [condition.values]).map((value) => value.value);
  const unmatched = condition.unmatchedValues?.length ? ` (unmatched: ${condition.unmatchedValues.join(', ')})` : '';
  const missing = condition.failedBecauseMissing ? ' (the request has no such key)' : '';
  return `condition ${condition.conditionKeyValue} ${condition.operator} ${JSON.stringify(values)} not met${unmatched}${missing}`;
}

function listOf(entries: { action?: string; resource?: string } | { action?: string; resource?: string }[] | undefined): string {
  const list = entries === undefined ? [] : Array.isArray(entries) ? entries : [entries];
  return JSON.stringify(list.map((entry) => entry.action ?? entry.resource));
}

function summary(finding: ResourceFinding): string {
  const statements = finding.statements
    .map((s) => `${s.label}${s.label.includes(s.policyLogicalId) ? '' : ` (${s.policyLogicalId})`} — ${s.reason}`)
    .join('; ');
  if (finding.kind === 'allowed') return `allowed by ${statements}`;
  if (finding.kind === 'explicit_deny') return `explicitly denied by ${statements}`;
  return `no statement allows it${statements ? ` (closest: ${statements})` : ''}`;
}

// -- the message a failed rehearsal prints -------------------------------------------------------------

/**
 * `<principal>: <action> on <resource> with dynamodb:LeadingKeys=… is not allowed by role <role>: no
 * statement allows it (closest: Sid X (policy) — condition … not met)`, one line per denied resource.
 */
export function describeDenial(verdict: CallVerdict, policies: RolePolicies): string {
  const { call } = verdict;
  const context = Object.entries(call.context)
    .map(([key, values]) => `${key}=${values.join(',')}`)
    .join(' ');
  const withContext = context ? ` with ${context}` : '';
  const sids = policies.statements.map((source) => source.sid ?? '(no Sid)').join(', ');
  const underSession = verdict.session ? ` under the session policy of ${verdict.session.label}` : '';
  const role = `role ${policies.roleLogicalId} (statements: ${sids || 'none'})${underSession}`;
  if (verdict.findings.length === 0)
    return `${call.principal}: ${call.action}${withContext} is not allowed by ${role}: ${verdict.explanation}`;
  const denied = verdict.findings.filter((finding) => finding.kind !== 'allowed');
  if (denied.length === 0) return `${call.principal}: ${call.action}${withContext} is allowed (${verdict.explanation})`;
  return denied
    .map(
      (finding) => `${call.principal}: ${call.action} on ${finding.resource}${withContext} is not allowed by ${role}: ${summary(finding)}`,
    )
    .join('\n');
}

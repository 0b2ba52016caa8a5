/**
 * The checks no unit test can make, over what the rehearsed stacks did: every AWS call each function
 * made allowed by its role, every alarm's metric emitted by some scenario, every failure metric alarmed
 * (or its reason documented), no secret value in any log line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  alarmCoverage,
  alarmMetrics,
  emfMetrics,
  metricFilters,
  metricFromLogLine,
  unalarmedReasonsFrom,
  type MetricId,
} from './alarm-coverage';
import type { CfnTemplate } from './assembly';
import { checkCalls, describeDenial, rolePolicies } from './iam-check';
import { tableArnOf, tenantCallsCheck } from './tenant-iam-check';
import type { RehearsedStack } from './rehearsed-stack';
import type { OperatorValues, RecordCheck } from './scenario-context';

export interface Check {
  name: string;
  /** True for a check that passed, and for one skipped (it proves nothing, and fails nothing). */
  ok: boolean;
  detail: string;
  /** Why it did not run: a step of the runbook not yet taken (e.g. the Slack workspace not named yet). */
  skipped?: string;
}

/**
 * Every AWS call each function made, evaluated against that function's role policies from the template:
 * the stack's own, or another revision of it (the check is pure over the recorded calls and a template).
 */
export async function checkIamCalls(stack: RehearsedStack, template: CfnTemplate = stack.stack.template): Promise<Check[]> {
  const checks: Check[] = [];
  const calls = stack.peers.recorder.calls();
  for (const logicalId of stack.functions.keys()) {
    const roleArn = stack.resolve(template.Resources[logicalId]!.Properties?.['Role']) as string;
    const roleLogicalId = Object.keys(template.Resources).find((id) => stack.context.resources[id]?.attributes['Arn'] === roleArn);
    if (!roleLogicalId) {
      checks.push({ name: `IAM: ${logicalId}'s role`, ok: false, detail: `role ${roleArn} is not in the template` });
      continue;
    }
    const policies = rolePolicies(template, roleLogicalId, stack.context);
    const own = calls.filter((call) => call.principal === logicalId);
    const verdicts = await checkCalls(policies, own);
    const denied = verdicts.filter((verdict) => !verdict.allowed);
    const distinct = new Set(own.map((call) => `${call.action} ${call.resources.join(',')}`));
    checks.push({
      name: `IAM: every AWS call of ${logicalId} is allowed by its role (${own.length} calls, ${distinct.size} distinct)`,
      ok: denied.length === 0,
      detail: denied
        .slice(0, 5)
        .map((verdict) => describeDenial(verdict, policies))
        .join('\n'),
    });
    checks.push(await tenantCallsCheck(logicalId, policies, own, tableArnOf(stack)));
  }
  return checks;
}

/** What a stack's functions, the platform and its access-log metric filters emitted during the rehearsal. */
function metricsEmitted(stack: RehearsedStack): MetricId[] {
  const filters = metricFilters(stack.stack.template, (value) => stack.resolve(value));
  const counted = filters.flatMap((filter) => stack.accessLog.map((entry) => metricFromLogLine(filter, entry.line)));
  return [
    ...emfMetrics(stack.lines.map((line) => line.line)),
    ...stack.platformMetrics,
    ...counted.filter((metric) => metric !== undefined),
  ];
}

/**
 * Alarms (resolved against the first stack) against what all the stacks emitted. With scenarios
 * skipped (`skipReason`), an alarm left silent may be one only they exercise: that check is skipped,
 * naming the silent alarms, rather than failed.
 */
export function metricChecks(stacks: readonly RehearsedStack[], projectRoot: string, skipReason?: string): Check[] {
  const [first] = stacks;
  if (!first) return [];
  const emitted = stacks.flatMap(metricsEmitted);
  const alarms = alarmMetrics(first.stack.template, (value) => first.resolve(value));
  const reasons = unalarmedReasonsFrom(readFileSync(join(projectRoot, 'docs/DEPLOY.md'), 'utf8'));
  const coverage = alarmCoverage({ alarms, emitted, unalarmedReasons: reasons });
  const silent = coverage.silentAlarms.map((alarm) => alarm.alarm);
  const silentCheck: Check = {
    name: `metrics: every alarm's metric was emitted in a scenario (${new Set(alarms.map((a) => a.alarm)).size} alarms)`,
    ok: silent.length === 0,
    detail: JSON.stringify(coverage.silentAlarms),
  };
  return [
    silent.length > 0 && skipReason !== undefined
      ? { ...silentCheck, ok: true, detail: '', skipped: `${skipReason}; not exercised: ${silent.join(', ')}` }
      : silentCheck,
    {
      name: 'metrics: every failure metric the code emits has an alarm or a reason in docs/DEPLOY.md',
      ok: coverage.unwatchedFailures.length === 0,
      detail: JSON.stringify(coverage.unwatchedFailures),
    },
  ];
}
export function checkNoSecretsLogged(stack: RehearsedStack, values: OperatorValues, record: RecordCheck): void {
  const secrets = [
    values.webhookSecret,
    values.readApiKey,
    values.slackToken,
    values.slackSigningSecret,
    // The action-signing key the stack generated (GenerateSecretString), unseen by any operator.
    ...Object.values(stack.resources.generatedSecrets),
  ].filter((value) => value.length >= 8);
  const leaked = stack.lines.filter((line) => secrets.some((secret) => line.line.includes(secret)));
  record(
    `logs: no secret value in any of the ${stack.lines.length} lines the functions printed`,
    leaked.length === 0,
    leaked
      .slice(0, 2)
      .map((line) => `${line.functionLogicalId}: ${line.line.slice(0, 120)}`)
      .join('\n'),
  );
}

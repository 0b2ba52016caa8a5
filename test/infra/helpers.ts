/**
 * Shared set-up of the infra tests: stage files (config/dev.json plus overrides) with bundling skipped, and helpers to
 * pick resources and IAM statements out of a synthesized template.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import { buildApp, type BuiltApp } from '../../infra/app';

/** The committed development stage file (config/dev.json). */
export function devConfig(): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL('../../config/dev.json', import.meta.url), 'utf8')) as Record<string, unknown>;
}

/**
 * The stage the infra tests start from: config/dev.json as a single-workspace stage, without its "Add to Slack"
 * (`slackClientId`, there for the rehearsal's two-tenant scenario); test/infra/slack-oauth.test.ts covers that.
 */
export function singleWorkspaceDevConfig(): Record<string, unknown> {
  const { slackClientId: _addToSlack, ...config } = devConfig();
  return config;
}

/** Writes `<stage>.json` files into a fresh directory and returns it. */
export function configDir(files: Record<string, Record<string, unknown>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-config-'));
  for (const [stage, values] of Object.entries(files)) writeFileSync(join(dir, `${stage}.json`), JSON.stringify(values));
  return dir;
}

export interface TestApp extends BuiltApp {
  readonly template: Template;
}

export interface SynthOptions {
  readonly cfnValidation?: boolean;
  readonly outdir?: string;
  readonly stage?: string;
  readonly env?: Environment;
}

/**
 * Builds the app for a stage whose file is config/dev.json (single-workspace) plus `overrides`, and synthesizes it.
 * Bundling is skipped; CloudFormation schema validation (slow) is off unless asked for.
 */
export function synthApp(overrides: Record<string, unknown> = {}, options: SynthOptions = {}): TestApp {
  const stage = options.stage ?? 'dev';
  const built = buildApp(
    {
      context: { stage, 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: options.cfnValidation ?? false,
      ...(options.outdir ? { outdir: options.outdir } : {}),
    },
    { configDir: configDir({ [stage]: { ...singleWorkspaceDevConfig(), ...overrides } }), env: options.env },
  );
  return { ...built, template: Template.fromStack(built.stack) };
}

/** A production stage (not development, alarms mailed to ops) of config/dev.json plus `overrides`, and its digest queue's logical id. */
export function synthProdApp(overrides: Record<string, unknown> = {}): TestApp & { digestQueueId: string } {
  const app = synthApp({ development: false, alarmEmail: 'ops@example.com', ...overrides }, { stage: 'prod' });
  return { ...app, digestQueueId: logicalId(app.template, 'AWS::SQS::Queue', 'DigestQueue') };
}

export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

interface PolicyResource {
  Properties: { PolicyDocument: { Statement: Statement[] }; Roles: { Ref: string }[] };
}

/** Logical id of the only resource of a type whose logical id starts with the given prefix. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ') || 'none'}`);
  return ids[0]!;
}

/** All IAM statements attached (inline or default policy) to the role with this logical id prefix. */
export function roleStatements(template: Template, rolePrefix: string): Statement[] {
  const roleId = logicalId(template, 'AWS::IAM::Role', rolePrefix);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as PolicyResource[];
  return policies
    .filter((policy) => policy.Properties.Roles.some((role) => role.Ref === roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

export function actionsOf(statement: Statement): string[] {
  return (Array.isArray(statement.Action) ? statement.Action : [statement.Action]).slice().sort();
}

export function resourcesOf(statement: Statement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** The statement with this Sid (throws if missing). */
export function statementBySid(statements: Statement[], sid: string): Statement {
  const found = statements.find((statement) => statement.Sid === sid);
  if (!found) throw new Error(`no statement with Sid ${sid} in ${JSON.stringify(statements)}`);
  return found;
}

/**
 * The LeadingKeys condition over `prefixes` (`<prefix>*`), with the tenant form (`t#*#<prefix>*`) of those
 * in `tenantKeyed`: a connection's items of that kind are keyed under its tenant prefix (shared/tenancy.ts).
 */
export function leadingKeys(prefixes: readonly string[], tenantKeyed: readonly string[] = []): Record<string, unknown> {
  return {
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...prefixes.map((p) => `${p}*`), ...tenantKeyed.map((p) => `t#*#${p}*`)] },
  };
}

export const ref = (id: string): { Ref: string } => ({ Ref: id });
export const arnOf = (id: string): { 'Fn::GetAtt': [string, string] } => ({ 'Fn::GetAtt': [id, 'Arn'] });

/** An EventBridge Scheduler schedule's properties (the fields the schedule tests read). */
export interface ScheduleProps {
  ScheduleExpression: string;
  ScheduleExpressionTimezone: string;
  State: string;
  Target: { Arn: unknown; Input: string; RoleArn: unknown; RetryPolicy: { MaximumEventAgeInSeconds: number } };
}

/** The properties of the only schedule whose logical id starts with `prefix` (fails when there is not exactly one). */
function scheduleProps(template: Template, prefix: string): ScheduleProps {
  const schedules = Object.entries(template.findResources('AWS::Scheduler::Schedule')).filter(([id]) => id.startsWith(prefix));
  expect(schedules).toHaveLength(1);
  return schedules[0]?.[1]?.Properties as ScheduleProps;
}

/**
 * A schedule of the digest queue (logical id `<prefix>…`): it sends `{ kind }` to the queue `queueId`
 * with its own role (`<prefix>SchedulerRole`), each event given up after `maxAgeSeconds`. Returns its
 * properties for what is its own (its expression, its zone).
 */
export function expectQueueSchedule(
  template: Template,
  prefix: string,
  target: { queueId: string; kind: string; maxAgeSeconds: number },
): ScheduleProps {
  const props = scheduleProps(template, prefix);
  expect(props.Target.Arn).toEqual(arnOf(target.queueId));
  expect(JSON.parse(props.Target.Input)).toEqual({ kind: target.kind });
  expect(props.Target.RetryPolicy.MaximumEventAgeInSeconds).toBe(target.maxAgeSeconds);
  expect(props.Target.RoleArn).toEqual(arnOf(logicalId(template, 'AWS::IAM::Role', `${prefix}SchedulerRole`)));
  return props;
}

/**
 * A schedule's role: assumable by Scheduler of this account only (a role whose description matches
 * `description`), allowed sqs:SendMessage on the queue `queueId` and nothing else.
 */
export function expectQueueSenderRole(template: Template, rolePrefix: string, description: string, queueId: string): void {
  template.hasResourceProperties('AWS::IAM::Role', {
    AssumeRolePolicyDocument: {
      Statement: [
        Match.objectLike({
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
        }),
      ],
    },
    Description: Match.stringLikeRegexp(description),
  });
  const statements = roleStatements(template, rolePrefix);
  expect(statements.flatMap(actionsOf)).toEqual(['sqs:SendMessage']);
  expect(statements.flatMap(resourcesOf)).toEqual([arnOf(queueId)]);
}

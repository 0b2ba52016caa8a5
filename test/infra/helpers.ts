/**
 * Shared set-up of the infra tests: the cdk.json context with bundling skipped, and helpers to
 * pick resources and IAM statements out of a synthesized template.
 */
import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp, type BuiltApp } from '../../infra/app';

/** CDK v1 flags in cdk.json that CDK v2 rejects; dropped here so the tests exercise the rest. */
const REMOVED_V1_FLAGS = ['@aws-cdk/core:enableStackNameDuplicates'];

interface CdkJson {
  context: Record<string, unknown>;
}

/** The context shipped in cdk.json (minus removed v1 flags). */
export function cdkJsonContext(): Record<string, unknown> {
  const parsed = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as CdkJson;
  const context = { ...parsed.context };
  for (const flag of REMOVED_V1_FLAGS) delete context[flag];
  return context;
}

export interface TestApp extends BuiltApp {
  readonly template: Template;
}

/**
 * Builds the app with cdk.json's context plus overrides and synthesizes the stack. Bundling is
 * skipped; the built-in CloudFormation schema validation (slow) is off unless asked for.
 */
export function synthApp(overrides: Record<string, unknown> = {}, options: { cfnValidation?: boolean; outdir?: string } = {}): TestApp {
  const built = buildApp({
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...overrides },
    builtinCloudFormationValidation: options.cfnValidation ?? false,
    ...(options.outdir ? { outdir: options.outdir } : {}),
  });
  return { ...built, template: Template.fromStack(built.stack) };
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

export const ref = (id: string): { Ref: string } => ({ Ref: id });
export const arnOf = (id: string): { 'Fn::GetAtt': [string, string] } => ({ 'Fn::GetAtt': [id, 'Arn'] });

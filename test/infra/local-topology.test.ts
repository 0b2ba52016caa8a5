/**
 * The local stack (local/topology.ts, what `npm start` and the e2e tests run) against the synthesized
 * development stack, resource by resource: queues and their dead-letter policies, event sources,
 * HTTP routes and schedules. A difference fails unless LOCAL_DIFFERENCES declares it with its reason.
 */
import { describe, expect, it } from 'vitest';
import { ENV } from '../../shared/contracts';
import { LOCAL_DIFFERENCES, LOCAL_TOPOLOGY, type QueueKey, type QueueSpec } from '../../local/topology';
import { synthApp } from './helpers';

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** A topology as both sides describe it: each value by its path (`queues.digest.retentionSeconds`). */
type Flat = Map<string, unknown>;

const resources = (synthApp().template.toJSON() as { Resources: Record<string, Resource> }).Resources;

function ofType(type: string): [string, Record<string, unknown>][] {
  return Object.entries(resources)
    .filter(([, resource]) => resource.Type === type)
    .map(([id, resource]) => [id, resource.Properties ?? {}]);
}

/** The logical id a `{Ref}` or `{Fn::GetAtt: [id, …]}` points at. */
function target(value: unknown): string | undefined {
  const object = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown[] } | undefined;
  if (typeof object?.Ref === 'string') return object.Ref;
  const getAtt = object?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
}

/** Each function's service name (POWERTOOLS_SERVICE_NAME), by logical id. */
function services(): Map<string, string> {
  return new Map(
    ofType('AWS::Lambda::Function').map(([id, props]) => {
      const variables = (props['Environment'] as { Variables: Record<string, unknown> }).Variables;
      return [id, String(variables[ENV.powertoolsServiceName])];
    }),
  );
}

/**
 * Each template queue's key: the local queue whose URL variable holds it in a function's environment,
 * else `<key of the queue that dead-letters into it>Dlq`, else its logical id (no local counterpart).
 */
function queueKeys(): Map<string, string> {
  const keys = new Map<string, string>();
  const urlEnvs = Object.entries(LOCAL_TOPOLOGY.queues as Record<QueueKey, QueueSpec>).filter(([, spec]) => spec.urlEnv !== undefined);
  for (const [, props] of ofType('AWS::Lambda::Function')) {
    const variables = (props['Environment'] as { Variables: Record<string, unknown> }).Variables;
    for (const [key, spec] of urlEnvs) {
      const id = target(variables[spec.urlEnv!]);
      if (id !== undefined) keys.set(id, key);
    }
  }
  for (const [id, props] of ofType('AWS::SQS::Queue')) {
    const dlq = target((props['RedrivePolicy'] as { deadLetterTargetArn?: unknown } | undefined)?.deadLetterTargetArn);
    if (dlq !== undefined && !keys.has(dlq)) keys.set(dlq, `${keys.get(id) ?? id}Dlq`);
  }
  for (const [id] of ofType('AWS::SQS::Queue')) if (!keys.has(id)) keys.set(id, id);
  return keys;
}

/** Minutes between runs of `rate(N minutes)` or `cron(0/N * * * ? *)`; anything else as written. */
function everyMinutes(expression: string): number | string {
  const rate = /^rate\((\d+) minutes?\)$/.exec(expression);
  if (rate) return Number(rate[1]);
  const cron = /^cron\(0\/(\d+) \* \* \* \? \*\)$/.exec(expression);
  return cron ? Number(cron[1]) : expression;
}

function deployed(): Flat {
  const flat: Flat = new Map();
  const queueKey = queueKeys();
  const service = services();
  for (const [id, props] of ofType('AWS::SQS::Queue')) {
    const key = queueKey.get(id)!;
    flat.set(`queues.${key}.retentionSeconds`, props['MessageRetentionPeriod']);
    flat.set(`queues.${key}.visibilityTimeoutSeconds`, props['VisibilityTimeout']);
    const redrive = props['RedrivePolicy'] as { deadLetterTargetArn: unknown; maxReceiveCount: number } | undefined;
    flat.set(`queues.${key}.deadLetter.queue`, redrive && queueKey.get(target(redrive.deadLetterTargetArn)!));
    flat.set(`queues.${key}.deadLetter.maxReceiveCount`, redrive?.maxReceiveCount);
  }
  for (const [, props] of ofType('AWS::Lambda::EventSourceMapping')) {
    const key = queueKey.get(target(props['EventSourceArn'])!)!;
    flat.set(`eventSources.${key}.queue`, key);
    flat.set(`eventSources.${key}.function`, service.get(target(props['FunctionName'])!));
    flat.set(`eventSources.${key}.batchSize`, props['BatchSize']);
    flat.set(`eventSources.${key}.batchingWindowSeconds`, props['MaximumBatchingWindowInSeconds'] ?? 0);
    flat.set(
      `eventSources.${key}.concurrency`,
      (props['ScalingConfig'] as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency,
    );
    flat.set(
      `eventSources.${key}.reportBatchItemFailures`,
      ((props['FunctionResponseTypes'] as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
    );
  }
  const integrations = new Map(ofType('AWS::ApiGatewayV2::Integration').map(([id, props]) => [id, target(props['IntegrationUri'])]));
  for (const [, props] of ofType('AWS::ApiGatewayV2::Route')) {
    const join = (props['Target'] as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const integration = join.map(target).find((id) => id !== undefined);
    flat.set(`routes.${String(props['RouteKey'])}`, service.get(integrations.get(integration!)!));
  }
  const scheduleKeys = new Map(Object.entries(LOCAL_TOPOLOGY.schedules).map(([key, spec]) => [spec.kind as string, key]));
  for (const [, props] of ofType('AWS::Scheduler::Schedule')) {
    const schedule = props['Target'] as { Arn: unknown; Input: string };
    const kind = (JSON.parse(schedule.Input) as { kind: string }).kind;
    const key = scheduleKeys.get(kind) ?? kind;
    flat.set(`schedules.${key}.kind`, kind);
    flat.set(`schedules.${key}.queue`, queueKey.get(target(schedule.Arn)!));
    flat.set(`schedules.${key}.everyMinutes`, everyMinutes(String(props['ScheduleExpression'])));
  }
  return flat;
}

function local(): Flat {
  const flat: Flat = new Map();
  for (const [key, spec] of Object.entries(LOCAL_TOPOLOGY.queues as Record<QueueKey, QueueSpec>)) {
    flat.set(`queues.${key}.retentionSeconds`, spec.retentionSeconds);
    flat.set(`queues.${key}.visibilityTimeoutSeconds`, spec.visibilityTimeoutSeconds);
    flat.set(`queues.${key}.deadLetter.queue`, spec.deadLetter?.queue);
    flat.set(`queues.${key}.deadLetter.maxReceiveCount`, spec.deadLetter?.maxReceiveCount);
  }
  for (const [key, spec] of Object.entries(LOCAL_TOPOLOGY.eventSources)) {
    for (const [field, value] of Object.entries(spec)) flat.set(`eventSources.${key}.${field}`, value);
  }
  for (const route of LOCAL_TOPOLOGY.routes) flat.set(`routes.${route.method} ${route.path}`, route.function);
  for (const [key, spec] of Object.entries(LOCAL_TOPOLOGY.schedules)) {
    for (const [field, value] of Object.entries(spec)) flat.set(`schedules.${key}.${field}`, value);
  }
  return flat;
}

/** One line per undeclared difference, and per declared difference that is no longer one. */
function differences(localFlat: Flat, deployedFlat: Flat, declared: Readonly<Record<string, string>>): string[] {
  const lines: string[] = [];
  const paths = [...new Set([...localFlat.keys(), ...deployedFlat.keys()])].sort();
  for (const path of paths) {
    const [here, there] = [localFlat.get(path), deployedFlat.get(path)];
    const differs = JSON.stringify(here) !== JSON.stringify(there);
    if (differs && declared[path] === undefined) {
      lines.push(`${path}: local ${JSON.stringify(here) ?? '(none)'}, deployed ${JSON.stringify(there) ?? '(none)'}`);
    }
    if (!differs && declared[path] !== undefined) lines.push(`${path}: declared in LOCAL_DIFFERENCES but the same on both sides`);
  }
  for (const path of Object.keys(declared))
    if (!paths.includes(path)) lines.push(`${path}: declared in LOCAL_DIFFERENCES but no such value`);
  return lines;
}

describe('the local topology (local/topology.ts) against the synthesized stack', () => {
  it('differs only where LOCAL_DIFFERENCES says so', () => {
    expect(differences(local(), deployed(), LOCAL_DIFFERENCES)).toEqual([]);
  });

  it('finds every queue, event source, route and schedule of the template', () => {
    const flat = deployed();
    const count = (prefix: string, suffix: string): number =>
      [...flat.keys()].filter((p) => p.startsWith(prefix) && p.endsWith(suffix)).length;
    expect(count('queues.', '.retentionSeconds')).toBe(ofType('AWS::SQS::Queue').length);
    expect(count('eventSources.', '.batchSize')).toBe(ofType('AWS::Lambda::EventSourceMapping').length);
    expect(count('routes.', '')).toBe(ofType('AWS::ApiGatewayV2::Route').length);
    expect(count('schedules.', '.everyMinutes')).toBe(ofType('AWS::Scheduler::Schedule').length);
  });

  it('names a changed value, a value on one side only, and a stale declaration', () => {
    const deployedFlat = new Map<string, unknown>([
      ['queues.digest.retentionSeconds', 345_600],
      ['schedules.extra.everyMinutes', 60],
      ['routes.POST /webhook', 'ingest'],
    ]);
    const localFlat = new Map<string, unknown>([
      ['queues.digest.retentionSeconds', 3600],
      ['routes.POST /webhook', 'ingest'],
    ]);
    expect(differences(localFlat, deployedFlat, { 'routes.POST /webhook': 'why' })).toEqual([
      'queues.digest.retentionSeconds: local 3600, deployed 345600',
      'routes.POST /webhook: declared in LOCAL_DIFFERENCES but the same on both sides',
      'schedules.extra.everyMinutes: local (none), deployed 60',
    ]);
  });
});
